#include "engine/games/external_player.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <iostream>
#include <iterator>
#include <optional>
#include <thread>
#include <unordered_map>

// Boost.Process v2 on std::filesystem (no Boost.Filesystem library); 1.81's headers need these
// two included first in that mode, and its environment.hpp (find_executable) does not compile in
// it, hence find_on_path below.
#define BOOST_PROCESS_USE_STD_FS 1
#include <fmt/format.h>
#include <boost/asio/io_context.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/readable_pipe.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/writable_pipe.hpp>
#include <boost/asio/write.hpp>
#include <boost/optional.hpp>
#include <boost/process/v2/process.hpp>
#include <boost/process/v2/stdio.hpp>
#include <nlohmann/json.hpp>
#include <type_traits>

#include "engine/core/errors.h"
#include "engine/games/replay.h"

namespace cfr::lc {

namespace asio = boost::asio;
namespace bp = boost::process::v2;

std::vector<std::string> split_command(std::string_view command) {
  std::vector<std::string> out;
  std::string cur;
  bool in_word = false;
  char quote = 0;
  for (const char ch : command) {
    if (quote != 0) {
      if (ch == quote)
        quote = 0;
      else
        cur.push_back(ch);
    } else if (ch == '\'' || ch == '"') {
      quote = ch;
      in_word = true;
    } else if (ch == ' ' || ch == '\t' || ch == '\n') {
      if (in_word) out.push_back(std::move(cur));
      cur.clear();
      in_word = false;
    } else {
      cur.push_back(ch);
      in_word = true;
    }
  }
  if (quote != 0) throw InputError(fmt::format("external:{}: unbalanced {} quote", command, quote));
  if (in_word) out.push_back(std::move(cur));
  if (out.empty()) throw InputError("external: needs a command, e.g. external:python3 scripts/players/random_player.py");
  return out;
}

std::string external_log_name(std::string_view command) {
  std::string s;
  for (const char ch : command) {
    if (s.size() == 80) break;
    const bool ok =
        (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '.' || ch == '_' || ch == '-';
    s.push_back(ok ? ch : '_');
  }
  return "external-" + s + ".log";
}

std::string default_player_log_dir() {
  static const std::string dir = [] {
    std::error_code ec;
    std::filesystem::path tmp = std::filesystem::temp_directory_path(ec);
    if (ec) tmp = "/tmp";
    std::string name = (tmp / "cfr-player-logs-XXXXXX").string();
    if (::mkdtemp(name.data()) == nullptr)
      throw InputError(fmt::format("cannot create a players' log folder in {}: {}", tmp.string(), std::strerror(errno)));
    return name;
  }();
  return dir;
}

std::string action_name(const State& s, int action) {
  const Rules& r = s.rules();
  const int me = s.current_player();
  if (action < r.draw_deck_action()) {
    const Card c = s.hand_card(me, action / 2);
    return fmt::format("{} {}", action % 2 == 0 ? "play" : "discard", card_name(r, c));
  }
  if (action == r.draw_deck_action()) return "draw deck";
  const int color = action - r.draw_deck_action() - 1;
  return fmt::format("take {}", card_name(r, s.pile_top(color)));
}

namespace {

/// The first executable `name` in the directories of $PATH (what a shell's lookup finds), or empty.
std::filesystem::path find_on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string_view dirs = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  while (!dirs.empty()) {
    const std::size_t colon = dirs.find(':');
    const std::string_view dir = dirs.substr(0, colon);
    dirs = colon == std::string_view::npos ? std::string_view{} : dirs.substr(colon + 1);
    const std::filesystem::path p = std::filesystem::path(dir.empty() ? "." : dir) / name;
    std::error_code ec;
    if (std::filesystem::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0) return p;
  }
  return {};
}

void append_cards(std::string& out, const State& s, int n, auto card_at) {
  out.push_back('[');
  for (int i = 0; i < n; ++i) {
    if (i > 0) out.push_back(',');
    out.push_back('"');
    out += card_name(s.rules(), card_at(i));
    out.push_back('"');
  }
  out.push_back(']');
}

void append_expeditions(std::string& out, const State& s, int p) {
  out.push_back('[');
  for (int c = 0; c < s.rules().n_colors; ++c) {
    if (c > 0) out.push_back(',');
    append_cards(out, s, s.expedition_card_count(p, c), [&](int i) { return s.expedition_card(p, c, i); });
  }
  out.push_back(']');
}

}  // namespace

std::string decision_message(const State& s, std::uint64_t game, bool with_encoding) {
  const Rules& r = s.rules();
  const int me = s.current_player();
  std::string out = fmt::format(R"({{"type":"decide","game":{},"phase":"{}","turn":{},"move":{},"hand":)", game,
                                s.phase() == Phase::kCard ? "card" : "draw", s.turn_count(), s.move_count());
  append_cards(out, s, s.hand_size(me), [&](int i) { return s.hand_card(me, i); });
  out += R"(,"my_expeditions":)";
  append_expeditions(out, s, me);
  out += R"(,"their_expeditions":)";
  append_expeditions(out, s, 1 - me);
  out += R"(,"discard_piles":[)";
  for (int c = 0; c < r.n_colors; ++c) {
    if (c > 0) out.push_back(',');
    if (s.pile_size(c) == 0)
      out += R"({"top":null,"size":0})";
    else
      fmt::format_to(std::back_inserter(out), R"({{"top":"{}","size":{}}})", card_name(r, s.pile_top(c)), s.pile_size(c));
  }
  fmt::format_to(std::back_inserter(out), R"(],"deck_size":{},"my_score":{},"their_score":{},"blocked_pile":)", s.deck_size(),
                 s.total(me), s.total(1 - me));
  if (s.phase() == Phase::kDraw && s.pending_color() != State::kNoColor)
    fmt::format_to(std::back_inserter(out), "{}", s.pending_color());
  else
    out += "null";
  out += R"(,"legal":[)";
  bool first = true;
  for (ActionMask m = s.legal_mask(); m != 0; m &= m - 1) {
    const int a = std::countr_zero(m);
    fmt::format_to(std::back_inserter(out), R"({}{{"id":{},"name":"{}"}})", first ? "" : ",", a, action_name(s, a));
    first = false;
  }
  out.push_back(']');
  if (with_encoding) {
    std::vector<float> enc(static_cast<std::size_t>(s.info_state_size()));
    s.encode_info_state(me, enc);
    out += R"(,"encoding":[)";
    for (std::size_t i = 0; i < enc.size(); ++i) fmt::format_to(std::back_inserter(out), "{}{}", i ? "," : "", enc[i]);
    out.push_back(']');
  }
  out.push_back('}');
  return out;
}

namespace {

/// A line of the player's output as a cause can quote it: at most 200 bytes.
std::string quoted(std::string_view line) {
  constexpr std::size_t kMax = 200;
  return line.size() <= kMax ? fmt::format("'{}'", line) : fmt::format("'{}…' ({} bytes)", line.substr(0, kMax), line.size());
}

/// What ended one exchange of lines with the player.
enum class IoEnd { kDone, kTimeout, kEof, kWriteError, kLineTooLong };

/// Boost.Process initializer run in the child between fork and exec: a process group of its own
/// (stop_process kills the group) and the cap on what it may write to a file.
struct PlayerSetup {
  rlim_t max_file_bytes;
  template <typename Launcher, typename Path>
  boost::system::error_code on_exec_setup(Launcher&, const Path&, const char* const*&) const {
    if (::setpgid(0, 0) != 0) return {errno, boost::system::system_category()};
    const rlimit limit{max_file_bytes, max_file_bytes};
    if (::setrlimit(RLIMIT_FSIZE, &limit) != 0) return {errno, boost::system::system_category()};
    return {};
  }
};

class ExternalPlayer final : public BatchBot {
 public:
  ExternalPlayer(std::string_view command, const Rules& rules, const ExternalOptions& opts)
      : name_(fmt::format("{}{}", kExternalPrefix, command)),
        argv_(split_command(command)),
        rules_(rules),
        opts_(opts),
        log_path_(
            (std::filesystem::path(opts.log_dir.empty() ? default_player_log_dir() : opts.log_dir) / external_log_name(command))
                .string()) {
    rules_.validate();
    for (const double t : {opts.move_timeout_s, opts.start_timeout_s})
      if (!(t > 0) || !(t <= kMaxExternalTimeoutS))
        throw InputError(fmt::format("{}: the move and start timeouts must be > 0 and at most {} seconds (got {})", name_,
                                     kMaxExternalTimeoutS, t));
    if (opts.max_log_bytes < 4096) throw InputError(fmt::format("{}: the log limit must be at least 4096 bytes", name_));
    if (opts.log_dir.empty()) {  // the default folder (made by default_player_log_dir): said where, the user did not choose it
      std::cerr << fmt::format("{}: its stderr goes to {} (--player-logs DIR to choose the folder)\n", name_, log_path_);
    }
    // A write to a player that exited must fail with EPIPE, not kill this process.
    std::signal(SIGPIPE, SIG_IGN);
    if (const std::string why = launch(); !why.empty()) throw InputError(fmt::format("{}: {}", name_, why));
  }

  ~ExternalPlayer() override {
    if (ignored_answers_ > kIgnoredAnswersShown)
      std::cerr << fmt::format("{}: ignored {} answers in all for games that awaited none\n", name_, ignored_answers_);
    if (!proc_) return;
    out_buf_ += R"({"type":"quit"})"
                "\n";  // after the events still queued
    (void)run_io(1.0, nullptr);
    boost::system::error_code ec;
    in_->close(ec);
    stop_process(2.0);
  }

  std::string_view name() const noexcept override { return name_; }

  void game_started(int game, int seat, std::uint64_t seed) override {
    // A failed start is tried again after a backoff (1 s, doubling to a minute): a player that
    // could not start once (a full disk, a file being replaced) is not dead for good.
    if (!proc_ && (restart_failure_.empty() || std::chrono::steady_clock::now() >= next_restart_)) restart();
    Game& g = games_[game];
    g = Game{.uid = next_uid_++, .seat = seat, .generation = generation_, .cause = restart_failure_};
    if (g.cause.empty())
      fmt::format_to(std::back_inserter(out_buf_),
                     R"({{"type":"start","game":{},"index":{},"seat":{},"seed":{}}})"
                     "\n",
                     g.uid, game, seat, seed);
    flush_backlog();
  }

  void move_made(int game, const State& before, int action) override {
    const auto it = games_.find(game);
    if (it == games_.end() || !live(it->second) || before.current_player() == it->second.seat) return;
    fmt::format_to(std::back_inserter(out_buf_),
                   R"({{"type":"move","game":{},"player":{},"action":{},"name":"{}"}})"
                   "\n",
                   it->second.uid, before.current_player(), action, action_name(before, action));
    flush_backlog();
  }

  void game_ended(int game, const State& final, int forfeited_by) override {
    const auto it = games_.find(game);
    if (it == games_.end()) return;
    const Game& g = it->second;
    if (known(g)) {  // a forfeited game too: the player hears how it ended
      const int mine = final.total(g.seat), theirs = final.total(1 - g.seat);
      const char* result = forfeited_by >= 0 ? (forfeited_by == g.seat ? "loss" : "win")
                           : mine > theirs   ? "win"
                           : mine < theirs   ? "loss"
                                             : "draw";
      const char* reason = forfeited_by >= 0 ? "forfeit" : final.is_terminal() ? "finished" : "action_cap";
      fmt::format_to(std::back_inserter(out_buf_),
                     R"({{"type":"end","game":{},"my_score":{},"their_score":{},"result":"{}","reason":"{}"}})"
                     "\n",
                     g.uid, mine, theirs, result, reason);
    }
    games_.erase(it);
    flush_backlog();
  }

  void match_ended() override {
    for (const auto& [k, g] : games_)
      if (known(g))
        fmt::format_to(std::back_inserter(out_buf_),
                       R"({{"type":"end","game":{},"reason":"abandoned"}})"
                       "\n",
                       g.uid);
    games_.clear();
    if (proc_ && !out_buf_.empty()) {
      const IoEnd e = run_io(opts_.move_timeout_s, nullptr);
      if (e != IoEnd::kDone) player_lost(e, "while told the match's last events");
    }
  }

  std::string forfeit_cause(int game) const override {
    const auto it = games_.find(game);
    return it == games_.end() ? "forfeit" : it->second.cause;
  }

  void choose_actions(std::span<const State* const> states, std::span<Rng* const>, std::span<const int> games,
                      std::span<int> actions) override {
    awaiting_.clear();
    for (std::size_t i = 0; i < states.size(); ++i) {
      Game& g = games_.at(games[i]);  // game_started came first
      if (!g.cause.empty()) {
        actions[i] = kForfeit;
        continue;
      }
      out_buf_ += decision_message(*states[i], g.uid, encoding_);
      out_buf_.push_back('\n');
      awaiting_.emplace(g.uid, Awaited{.index = i, .game = games[i]});
    }
    if (awaiting_.empty()) return;
    std::size_t answered = 0;
    const auto on_line = [&](std::string_view line) {
      answer(line, states, actions, answered);
      return awaiting_.empty();
    };
    const IoEnd e = run_io(opts_.move_timeout_s, on_line);
    if (e == IoEnd::kDone) return;
    if (e == IoEnd::kTimeout && answered > 0 && !unwritten_) {
      // Some answers came: only the games still waiting are forfeited; late answers are ignored.
      for (auto& [uid, a] : awaiting_)
        forfeit(a, actions, fmt::format("no answer within the move timeout of {} s", opts_.move_timeout_s));
      awaiting_.clear();
      return;
    }
    player_lost(e, "before answering");
    for (auto& [uid, a] : awaiting_) {
      actions[a.index] = kForfeit;  // player_lost recorded the cause
    }
    awaiting_.clear();
  }

 private:
  struct Game {
    std::uint64_t uid = 0;  // the protocol's game id: unique over this player's lifetime
    int seat = 0;
    int generation = 0;  // the process that knows this game
    std::string cause;   // why the game is forfeited (empty: it is not)
  };
  struct Awaited {
    std::size_t index = 0;  // in choose_actions' spans
    int game = 0;           // the match's game index
  };

  /// Bytes of out_buf_ not yet written.
  std::size_t backlog() const { return out_buf_.size() - out_head_; }

  /// Events wait in out_buf_ for the next decisions, to go with them in one write. Past kFlushAt
  /// bytes (games started and ended with no decision, as a web client creating and abandoning
  /// games does) they are written as the player takes them: what its pipe accepts now, never
  /// waiting. The hooks that queue events (game_started, move_made, game_ended) must not block:
  /// cfr-serve calls them while it serves a game's requests, a match between its moves; waiting
  /// for the player is choose_actions' work, within the move timeout. A backlog past
  /// kMaxBacklog + kBacklogPerGame for each game in progress (far more than the events of one
  /// round of every game: a start, a few moves, an end) means the player has stopped reading its
  /// input: it is stopped, its games forfeited, and it is started again for the next game. So the
  /// backlog holds at most that bound plus one event (about 200 bytes), and a round's decisions.
  void flush_backlog() {
    if (backlog() < kFlushAt || !proc_) return;
    const ssize_t n = ::write(in_->native_handle(), out_buf_.data() + out_head_, backlog());  // O_NONBLOCK (launch)
    if (n > 0) {
      out_head_ += static_cast<std::size_t>(n);
      if (out_head_ >= out_buf_.size() / 2) {  // the written part goes once it is half: amortised O(1) a byte
        out_buf_.erase(0, out_head_);
        out_head_ = 0;
      }
    } else if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
      // Its input is closed (EPIPE: it exited, most likely): the events are for nobody, and the
      // next decision's write fails and finds out why.
      out_buf_.clear();
      out_head_ = 0;
      return;
    }
    if (backlog() > kMaxBacklog + kBacklogPerGame * games_.size())
      player_lost(fmt::format(
          "it stopped reading its input: over {} KiB of events about its games were left unread (the player was stopped)",
          (kMaxBacklog + kBacklogPerGame * games_.size()) >> 10));
  }

  /// The running process knows the game (it was started by this process).
  bool known(const Game& g) const { return g.generation == generation_ && proc_.has_value(); }
  /// ... and the game is not forfeited: it is told the game's moves.
  bool live(const Game& g) const { return g.cause.empty() && known(g); }

  void forfeit(const Awaited& a, std::span<int> actions, std::string cause) {
    actions[a.index] = kForfeit;
    games_.at(a.game).cause = std::move(cause);
  }

  /// One answer line during choose_actions.
  void answer(std::string_view line, std::span<const State* const> states, std::span<int> actions, std::size_t& answered) {
    const nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    const auto game = j.is_object() ? j.find("game") : j.end();
    if (!j.is_object() || game == j.end() || !game->is_number_unsigned()) {
      // No game to pin it on: every game awaiting an answer is forfeited.
      const std::string cause = fmt::format("malformed answer {} (want {{\"game\": ID, \"action\": ID}})", quoted(line));
      for (auto& [uid, a] : awaiting_) forfeit(a, actions, cause);
      awaiting_.clear();
      return;
    }
    const auto it = awaiting_.find(game->get<std::uint64_t>());
    if (it == awaiting_.end()) {
      // Said a few times, then counted: a player cannot flood this process's stderr.
      if (++ignored_answers_ <= kIgnoredAnswersShown)
        std::cerr << fmt::format("{}: ignored an answer for a game that awaits none (late, or unknown): {}{}\n", name_,
                                 quoted(line),
                                 ignored_answers_ == kIgnoredAnswersShown ? " (further ones are counted, not shown)" : "");
      return;
    }
    const Awaited a = it->second;
    awaiting_.erase(it);
    ++answered;
    const auto action = j.find("action");
    if (action == j.end() || !action->is_number_integer()) {
      forfeit(a, actions, fmt::format("malformed answer {}: no integer \"action\"", quoted(line)));
      return;
    }
    const State& s = *states[a.index];
    const auto id = action->get<std::int64_t>();
    if (id < 0 || id >= s.num_distinct_actions() || ((s.legal_mask() >> id) & 1) == 0) {
      std::string legal;
      for (ActionMask m = s.legal_mask(); m != 0; m &= m - 1)
        legal += fmt::format("{}{}", legal.empty() ? "" : ",", std::countr_zero(m));
      forfeit(a, actions, fmt::format("illegal action {} in answer {} (legal: {})", id, quoted(line), legal));
      return;
    }
    actions[a.index] = static_cast<int>(id);
  }

  /// Writes out_buf_ and, with on_line, reads lines and hands each to it until it returns true;
  /// at most timeout_s in all. unwritten_ says whether the write was cut short.
  IoEnd run_io(double timeout_s, const std::function<bool(std::string_view)>& on_line) {
    unwritten_ = false;
    bool done = !on_line;
    // Lines already read (after the last awaited answer of an earlier round).
    auto drain = [&] {
      for (std::size_t nl; !done && (nl = read_buf_.find('\n')) != std::string::npos;) {
        const std::string line = read_buf_.substr(0, nl);
        read_buf_.erase(0, nl + 1);
        if (line.find_first_not_of(" \t\r") == std::string::npos) continue;  // blank
        done = on_line(line);
      }
    };
    drain();
    out_buf_.erase(0, out_head_);  // what flush_backlog wrote
    out_head_ = 0;
    std::string writing;
    writing.swap(out_buf_);
    if (done && writing.empty()) return IoEnd::kDone;
    IoEnd end = IoEnd::kDone;
    bool finished = false, write_pending = false, read_pending = false;
    asio::steady_timer timer(ctx_);
    auto finish = [&](IoEnd e) {
      if (finished) return;
      finished = true;
      end = e;
      unwritten_ = write_pending;
      timer.cancel();
      boost::system::error_code ec;
      if (write_pending) in_->cancel(ec);
      if (read_pending) out_->cancel(ec);
    };
    auto maybe_done = [&] {
      if (done && !write_pending) finish(IoEnd::kDone);
    };
    std::function<void()> read_more = [&] {
      read_pending = true;
      asio::async_read_until(*out_, asio::dynamic_buffer(read_buf_, opts_.max_line_bytes), '\n',
                             [&](const boost::system::error_code& ec, std::size_t) {
                               read_pending = false;
                               if (finished) return;
                               if (ec) {
                                 finish(ec == asio::error::not_found ? IoEnd::kLineTooLong : IoEnd::kEof);
                                 return;
                               }
                               drain();
                               if (done)
                                 maybe_done();
                               else
                                 read_more();
                             });
    };
    if (!writing.empty()) {
      write_pending = true;
      asio::async_write(*in_, asio::buffer(writing), [&](const boost::system::error_code& ec, std::size_t) {
        write_pending = false;
        if (finished) return;
        if (ec)
          finish(IoEnd::kWriteError);
        else
          maybe_done();
      });
    }
    if (!done) read_more();
    timer.expires_after(
        std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(timeout_s)));
    timer.async_wait([&](const boost::system::error_code& ec) {
      if (!ec) finish(IoEnd::kTimeout);
    });
    ctx_.restart();
    ctx_.run();
    return end;
  }

  /// Starts the process and exchanges the hello; the reason it failed, or empty.
  std::string launch() {
    std::filesystem::path exe = argv_[0];
    if (argv_[0].find('/') == std::string::npos) {
      exe = find_on_path(argv_[0]);
      if (exe.empty()) return fmt::format("'{}' is not an executable on PATH", argv_[0]);
    }
    std::error_code fs_ec;
    if (!std::filesystem::is_regular_file(exe, fs_ec) || ::access(exe.c_str(), X_OK) != 0)
      return fmt::format("'{}' is not an executable file", exe.string());
    std::error_code size_ec;
    if (const auto size = std::filesystem::file_size(log_path_, size_ec); !size_ec && size >= opts_.max_log_bytes / 2)
      std::filesystem::rename(log_path_, log_path_ + ".1", size_ec);  // the older half goes (at most two files a player)
    // Appended to, never through a symbolic link (a folder others can write must not redirect it).
    const int log_fd = ::open(log_path_.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    std::FILE* log = log_fd < 0 ? nullptr : ::fdopen(log_fd, "a");
    if (log == nullptr) {
      if (log_fd >= 0) ::close(log_fd);
      return fmt::format("cannot open its log file {} for appending: {}", log_path_, std::strerror(errno));
    }
    std::fprintf(log, "# %s: started\n", name_.c_str());
    std::fflush(log);
    in_.emplace(ctx_);
    out_.emplace(ctx_);
    read_buf_.clear();
    out_buf_.clear();
    out_head_ = 0;
    try {
      proc_.emplace(ctx_, exe, std::vector<std::string>(argv_.begin() + 1, argv_.end()), bp::process_stdio{*in_, *out_, log},
                    PlayerSetup{static_cast<rlim_t>(opts_.max_log_bytes)});
    } catch (const std::exception& e) {
      std::fclose(log);
      proc_.reset();
      return fmt::format("cannot run '{}': {}", exe.string(), e.what());
    }
    std::fclose(log);  // the player has its own descriptor
    // flush_backlog's writes must never wait (Asio's own are asynchronous: it sets the flag too).
    if (const int fd = in_->native_handle(), flags = ::fcntl(fd, F_GETFL);
        flags < 0 || ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0) {
      const std::string why = fmt::format("cannot make its input non-blocking: {}", std::strerror(errno));
      stop_process(0.0);
      return why;
    }
    ++generation_;
    const nlohmann::json hello = {{"type", "hello"},
                                  {"protocol", "lost-cities-external"},
                                  {"version", kExternalProtocolVersion},
                                  {"rules", nlohmann::json::parse(rules_json_text(rules_))},
                                  {"action_size", rules_.action_size()},
                                  {"encoding_size", encoding_size(rules_, EncodingOptions{})},
                                  {"move_timeout_s", opts_.move_timeout_s}};
    out_buf_ = hello.dump() + "\n";
    std::string why;
    const IoEnd e = run_io(opts_.start_timeout_s, [&](std::string_view line) {
      const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
      const auto type = j.is_object() ? j.find("type") : j.end();
      if (type == j.end() || *type != "ready") {
        why = fmt::format("answered the hello with {}, not {{\"type\": \"ready\"}}", quoted(line));
        return true;
      }
      if (const auto v = j.find("version"); v != j.end() && *v != kExternalProtocolVersion) {
        // Only an integer is shown: a nested value would be written out recursively, and can be deep.
        why = v->is_number_integer()
                  ? fmt::format("speaks protocol version {}, this engine version {}", v->dump(), kExternalProtocolVersion)
                  : fmt::format("answered the hello with a \"version\" that is not an integer (this engine speaks {})",
                                kExternalProtocolVersion);
        return true;
      }
      const auto enc = j.find("encoding");
      encoding_ = enc != j.end() && enc->is_boolean() && enc->get<bool>();
      return true;
    });
    if (e != IoEnd::kDone && why.empty())
      why = e == IoEnd::kTimeout ? fmt::format("no answer to the hello within {} s", opts_.start_timeout_s)
                                 : fmt::format("{} before answering the hello", exit_description());
    if (!why.empty()) {
      stop_process(0.0);
      return fmt::format("{} (its stderr: {})", why, log_path_);
    }
    return {};
  }

  void restart() {
    const std::string why = launch();
    if (why.empty()) {
      restart_failure_.clear();
      restart_backoff_s_ = 1.0;
      return;
    }
    // The reason names paths (the executable, its log): it goes to stderr only. The cause, which
    // reaches reports and cfr-serve's pages, says where to look.
    restart_failure_ = "the player could not be started again (the reason is in the log of the program that runs it)";
    std::cerr << fmt::format(
        "{}: the player could not be started again: {}; its games are forfeited until a start "
        "succeeds (the next try in {} s)\n",
        name_, why, restart_backoff_s_);
    next_restart_ = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                           std::chrono::duration<double>(restart_backoff_s_));
    restart_backoff_s_ = std::min(restart_backoff_s_ * 2, 60.0);
  }

  /// How the process ended (waits up to half a second for it, then stops it).
  std::string exit_description() {
    if (!proc_) return "the player is not running";
    boost::system::error_code ec;
    for (int i = 0; i < 50 && proc_->running(ec); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (proc_->running(ec)) return "the player closed its output";
    const int status = proc_->native_exit_code();
    std::string how = WIFSIGNALED(status) ? fmt::format("the player was killed by signal {}", WTERMSIG(status))
                                          : fmt::format("the player exited with status {}", WEXITSTATUS(status));
    // SIGXFSZ, or a write refused (EFBIG) where the player ignores that signal (Python does).
    std::error_code ec2;
    if (const auto size = std::filesystem::file_size(log_path_, ec2); !ec2 && size >= opts_.max_log_bytes)
      how += fmt::format(" when its log reached the limit of {} bytes a player may write (--player-log-mib)",
                         opts_.max_log_bytes);  // no path: causes reach reports and web pages (stderr names it)
    return how;
  }

  /// The process is gone, hung or out of step: every game it knows is forfeited with the cause,
  /// it is stopped, and the next game starts a new one.
  void player_lost(IoEnd e, std::string_view when) {
    std::string cause;
    switch (e) {
      case IoEnd::kTimeout:
        cause = fmt::format("no answer within the move timeout of {} s{} (the player was stopped)", opts_.move_timeout_s,
                            unwritten_ ? ", and it stopped reading its input" : "");
        break;
      case IoEnd::kLineTooLong:
        cause = fmt::format("an output line longer than {} bytes (the player was stopped)", opts_.max_line_bytes);
        break;
      default:
        cause = fmt::format("{} {}", exit_description(), when);
    }
    player_lost(std::move(cause));
  }
  void player_lost(std::string cause) {
    for (auto& [k, g] : games_)
      if (g.cause.empty() && g.generation == generation_) g.cause = cause;
    std::cerr << fmt::format("{}: {}; its games in progress are forfeited (stderr: {})\n", name_, cause, log_path_);
    stop_process(0.0);
  }

  /// Asks the process to end (its input closed), waits up to grace_s, then kills it.
  void stop_process(double grace_s) {
    if (!proc_) return;
    boost::system::error_code ec;
    if (in_) in_->close(ec);
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(grace_s);
    while (proc_->running(ec) && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    // The whole group: programs the player started (a wrapper's child, helpers) end with it.
    if (const auto pid = proc_->id(); pid > 0) ::kill(-pid, SIGKILL);
    if (proc_->running(ec)) proc_->terminate(ec);
    proc_.reset();
    if (out_) out_->close(ec);
    in_.reset();
    out_.reset();
    out_buf_.clear();
    out_head_ = 0;
    read_buf_.clear();
  }

  std::string name_;
  std::vector<std::string> argv_;
  Rules rules_;
  ExternalOptions opts_;
  std::string log_path_;
  asio::io_context ctx_;
  std::optional<asio::writable_pipe> in_;   // the player's stdin
  std::optional<asio::readable_pipe> out_;  // the player's stdout
  std::optional<bp::process> proc_;
  int generation_ = 0;     // processes started so far
  bool encoding_ = false;  // the player asked for the encoding in its ready
  bool unwritten_ = false;
  std::string restart_failure_;  // the cause while the player cannot be started; empty when it can
  std::chrono::steady_clock::time_point next_restart_{};
  double restart_backoff_s_ = 1.0;
  static constexpr std::size_t kFlushAt = 64 << 10;        // events past it are written as the player takes them
  static constexpr std::size_t kMaxBacklog = 1 << 20;      // unread events past it (and kBacklogPerGame a game
  static constexpr std::size_t kBacklogPerGame = 1 << 10;  // in progress): the player stopped reading its input
  static constexpr long kIgnoredAnswersShown = 10;
  long ignored_answers_ = 0;  // answers for games that awaited none
  std::string out_buf_, read_buf_;
  std::size_t out_head_ = 0;  // out_buf_'s first out_head_ bytes are written (flush_backlog)
  std::uint64_t next_uid_ = 1;
  std::unordered_map<int, Game> games_;                  // by the match's game index
  std::unordered_map<std::uint64_t, Awaited> awaiting_;  // by uid, during choose_actions
};

}  // namespace

std::unique_ptr<BatchBot> make_external_player(std::string_view command, const Rules& rules, const ExternalOptions& opts) {
  return std::make_unique<ExternalPlayer>(command, rules, opts);
}

}  // namespace cfr::lc
