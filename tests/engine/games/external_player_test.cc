// The external-player protocol's pieces that need no process (tests/check_external.py runs real
// players): command splitting, action names, the decide message, and the match's event hooks and
// forfeits that an external player relies on.
#include <doctest/doctest.h>
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "engine/core/errors.h"
#include "engine/games/bots.h"
#include "engine/games/external_player.h"
#include "engine/games/match.h"

using namespace cfr::lc;

TEST_CASE("split_command: whitespace separates, quotes group, nothing is expanded") {
  CHECK(split_command("python3 p.py --n 3") == std::vector<std::string>{"python3", "p.py", "--n", "3"});
  CHECK(split_command("  a  'b c'\"d\" $HOME;rm ") == std::vector<std::string>{"a", "b cd", "$HOME;rm"});
  CHECK(split_command("x ''") == std::vector<std::string>{"x", ""});
  CHECK_THROWS_AS(split_command("   "), cfr::InputError);
  CHECK_THROWS_AS(split_command("a 'b"), cfr::InputError);
  CHECK(external_log_name("python3 a/b.py") == "external-python3_a_b.py.log");
}

TEST_CASE("the decide message: the mover's view, legal actions with names, the encoding on request") {
  const Rules rules{};
  State s = State::deal(rules, 42);
  cfr::Rng rng(5);
  auto bot = make_bot("heuristic_noisy", rules);
  for (int step = 0; step < 60 && !s.is_terminal(); ++step) {
    const int me = s.current_player();
    const auto j = nlohmann::json::parse(decision_message(s, 9, step % 7 == 0));
    CHECK(j["type"] == "decide");
    CHECK(j["game"] == 9);
    CHECK(j["phase"] == (s.phase() == Phase::kCard ? "card" : "draw"));
    REQUIRE(j["hand"].size() == static_cast<std::size_t>(s.hand_size(me)));
    for (int i = 0; i < s.hand_size(me); ++i) CHECK(j["hand"][i] == card_name(rules, s.hand_card(me, i)));
    CHECK(j["deck_size"] == s.deck_size());
    CHECK(j["my_score"] == s.total(me));
    CHECK(j["their_score"] == s.total(1 - me));
    for (int c = 0; c < rules.n_colors; ++c) {
      CHECK(j["my_expeditions"][c].size() == static_cast<std::size_t>(s.expedition_card_count(me, c)));
      CHECK(j["their_expeditions"][c].size() == static_cast<std::size_t>(s.expedition_card_count(1 - me, c)));
      CHECK(j["discard_piles"][c]["size"] == s.pile_size(c));
      if (s.pile_size(c) > 0) CHECK(j["discard_piles"][c]["top"] == card_name(rules, s.pile_top(c)));
    }
    cfr::ActionMask mask = 0;
    for (const auto& a : j["legal"]) {
      const int id = a["id"];
      mask |= cfr::ActionMask{1} << id;
      const std::string name = a["name"];
      if (id < rules.draw_deck_action())
        CHECK(name == (id % 2 == 0 ? "play " : "discard ") + card_name(rules, s.hand_card(me, id / 2)));
      else if (id == rules.draw_deck_action())
        CHECK(name == "draw deck");
      else
        CHECK(name == "take " + card_name(rules, s.pile_top(id - rules.draw_deck_action() - 1)));
    }
    CHECK(mask == s.legal_mask());
    if (step % 7 == 0) {
      std::vector<float> enc(static_cast<std::size_t>(s.info_state_size()));
      s.encode_info_state(me, enc);
      REQUIRE(j["encoding"].size() == enc.size());
      for (std::size_t i = 0; i < enc.size(); ++i) CHECK(j["encoding"][i].get<float>() == enc[i]);
    } else {
      CHECK_FALSE(j.contains("encoding"));
    }
    s.apply_action(bot->choose_action(s, rng));
  }
}

namespace {
// Plays discard_only as a batch bot, records the match events, and forfeits game `forfeit_game`
// at its first decision.
class Recorder final : public BatchBot {
 public:
  explicit Recorder(int forfeit_game) : forfeit_game_(forfeit_game) {}
  std::string_view name() const noexcept override { return "recorder"; }
  void game_started(int, int seat, std::uint64_t) override {
    ++started;
    seats_ok = seats_ok && (seat == 0 || seat == 1);
  }
  void move_made(int, const State&, int) override { ++moves; }
  void game_ended(int game, const State&, int forfeited_by) override {
    ++ended;
    if (forfeited_by >= 0) forfeited_games.push_back(game);
  }
  void match_ended() override { ++matches; }
  std::string forfeit_cause(int game) const override { return "forfeit of game " + std::to_string(game); }
  void choose_actions(std::span<const State* const> states, std::span<cfr::Rng* const> rngs, std::span<const int> games,
                      std::span<int> actions) override {
    for (std::size_t i = 0; i < states.size(); ++i)
      actions[i] = games[i] == forfeit_game_ ? kForfeit : bot_->choose_action(*states[i], *rngs[i]);
  }
  int started = 0, moves = 0, ended = 0, matches = 0;
  bool seats_ok = true;
  std::vector<int> forfeited_games;

 private:
  int forfeit_game_;
  std::unique_ptr<Bot> bot_ = make_bot("discard_only", Rules{});
};
}  // namespace

TEST_CASE("match events reach a batch player, a forfeit is a loss with its cause, stop_on_fault stops") {
  auto other = make_bot("heuristic_balanced", Rules{});
  Recorder rec(3);
  const MatchReport r = run_match_players({.batch = &rec}, {.bot = other.get()}, {.games = 10, .seed = 4}, 4);
  CHECK(r.games == 10);
  CHECK(rec.started == 10);
  CHECK(rec.ended == 10);
  CHECK(rec.matches == 1);
  CHECK(rec.seats_ok);
  CHECK(rec.moves == static_cast<int>(r.length_sum));
  CHECK(r.decisions0 + r.decisions1 == static_cast<long>(r.length_sum));
  CHECK(rec.forfeited_games == std::vector<int>{3});
  REQUIRE(r.faults.size() == 1);
  CHECK(r.faults[0].game == 3);
  CHECK(r.faults[0].player == 0);
  CHECK(r.faults[0].cause == "forfeit of game 3");
  CHECK(r.forfeits(0) == 1);
  CHECK(r.forfeits(1) == 0);
  CHECK(!r.stopped);
  CHECK(r.timeouts == 0);  // a forfeit is not an action-cap timeout
  CHECK(nlohmann::json::parse(report_json(r))["forfeits0"] == 1);
  // discard_only never wins against heuristic_balanced here but for the forfeit the loss count is
  // the same game's: compare with the match without the forfeit.
  Recorder clean(-1);
  const MatchReport c = run_match_players({.batch = &clean}, {.bot = other.get()}, {.games = 10, .seed = 4}, 4);
  CHECK(r.losses == c.losses + (c.played[3] && c.diffs[3] >= 0 ? 1 : 0));

  // Seat 1 forfeiting (player 1 is bot 1) counts as bot 0's win.
  Recorder rec1(2);
  auto me = make_bot("discard_only", Rules{});
  const MatchReport r1 = run_match_players({.bot = me.get()}, {.batch = &rec1}, {.games = 6, .seed = 4}, 4);
  REQUIRE(r1.faults.size() == 1);
  CHECK(r1.faults[0].player == 1);
  CHECK(r1.forfeits(1) == 1);
  CHECK(r1.wins >= 1);

  Recorder stopper(1);
  const MatchReport s =
      run_match_players({.batch = &stopper}, {.bot = other.get()}, {.games = 10, .seed = 4, .stop_on_fault = true}, 4);
  CHECK(s.stopped);
  CHECK(s.stop_cause == "recorder forfeits game 1: forfeit of game 1");
  CHECK(s.games < 10);
  CHECK(stopper.matches == 1);
}

namespace {
// A player that says on stderr (its log) each "start" it reads, and exits with status 3 when asked
// to decide.
constexpr const char* kEventCounter = R"(#!/usr/bin/python3
import json, sys
for line in sys.stdin:
    t = json.loads(line)["type"]
    if t == "hello":
        print(json.dumps({"type": "ready"}), flush=True)
    elif t == "start":
        print("start", file=sys.stderr, flush=True)
    elif t == "decide":
        sys.exit(3)
    elif t == "quit":
        break
)";

struct TempDir {
  std::filesystem::path path;
  TempDir() {
    std::string t = (std::filesystem::temp_directory_path() / "cfr-external-test-XXXXXX").string();
    REQUIRE(::mkdtemp(t.data()) != nullptr);
    path = t;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

void write_player(const std::filesystem::path& p) {
  std::ofstream(p) << kEventCounter;
  std::filesystem::permissions(p, std::filesystem::perms::owner_all);
}

long starts_logged(const std::filesystem::path& log) {
  std::ifstream in(log);
  long n = 0;
  for (std::string line; std::getline(in, line);) n += line == "start";
  return n;
}
// The counting player written at `script` and started with its log in `dir`.
std::unique_ptr<BatchBot> counter_player(const TempDir& dir, const std::filesystem::path& script, ExternalOptions opts) {
  write_player(script);
  opts.log_dir = dir.path.string();
  return make_external_player(script.string(), Rules{}, opts);
}
}  // namespace

TEST_CASE("an external player hears games started and ended without decisions as they go, not in one backlog") {
  if (!std::filesystem::exists("/usr/bin/python3")) return;
  TempDir dir;
  const auto script = dir.path / "counter.py";
  auto p = counter_player(dir, script, ExternalOptions{});
  const State s = State::deal(Rules{}, 1);
  // About 160 bytes of events a game: 3000 games are 480 KB, queued whole before (until a decision).
  constexpr int kGames = 3000;
  const auto log = dir.path / external_log_name(script.string());
  for (int g = 0; g < kGames; ++g) {
    p->game_started(g, 0, static_cast<std::uint64_t>(g));
    p->game_ended(g, s, -1);
    if (g % 100 != 99) continue;
    // The games come over time (a web client's requests): the player has heard of all but the last
    // 64 KiB's worth (about 420 games; more are written as it reads, at the next event).
    long seen = 0;
    for (int i = 0; i < 100 && (seen = starts_logged(log)) < g + 1 - 500; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    REQUIRE(seen >= g + 1 - 500);
  }
  p.reset();  // quit: the rest is written
  CHECK(starts_logged(log) == kGames);
}

TEST_CASE("an external player that cannot be started again: a cause without a path, and a later start is tried") {
  if (!std::filesystem::exists("/usr/bin/python3")) return;
  TempDir dir;
  const auto script = dir.path / "counter.py";
  auto p = counter_player(dir, script, ExternalOptions{.move_timeout_s = 5});
  const State s = State::deal(Rules{}, 1);
  p->game_started(0, 0, 1);
  const State* states[1] = {&s};
  cfr::Rng rng(1);
  cfr::Rng* rngs[1] = {&rng};
  const int games[1] = {0};
  int actions[1] = {0};
  p->choose_actions(states, rngs, games, actions);  // it exits: the game is forfeited, the player stopped
  CHECK(actions[0] == BatchBot::kForfeit);
  CHECK(p->forfeit_cause(0).find("exited with status 3") != std::string::npos);
  std::filesystem::remove(script);
  p->game_started(1, 0, 2);  // its start fails
  const std::string cause = p->forfeit_cause(1);
  CHECK(cause.find("could not be started again") != std::string::npos);
  CHECK(cause.find(dir.path.string()) == std::string::npos);  // no server path reaches a report or a page
  CHECK(cause.find('/') == std::string::npos);
  write_player(script);
  p->game_started(2, 0, 3);  // within the backoff (1 s): not tried yet
  CHECK(!p->forfeit_cause(2).empty());
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  p->game_started(3, 0, 4);  // tried again: it starts, the game is live
  CHECK(p->forfeit_cause(3).empty());
}

namespace {
// A player that answers the hello and then reads nothing more: its input fills up.
constexpr const char* kDeafPlayer = R"(#!/bin/sh
read -r hello
echo '{"type":"ready"}'
exec sleep 600
)";
}  // namespace

TEST_CASE("an external player that stops reading: the event hooks never wait for it, and its unread events are capped") {
  TempDir dir;
  const auto script = dir.path / "deaf.sh";
  std::ofstream(script) << kDeafPlayer;
  std::filesystem::permissions(script, std::filesystem::perms::owner_all);
  // A long move timeout: a hook that waited for the player's pipe would take that long.
  auto p = make_external_player(script.string(), Rules{}, ExternalOptions{.move_timeout_s = 5, .log_dir = dir.path.string()});
  const State s = State::deal(Rules{}, 1);
  p->game_started(0, 1, 1);  // a game in progress all along
  // Games started and ended with no decision (a web client creating and abandoning games): about
  // 170 bytes of events each, past the 64 KiB pipe and the 1 MiB the player may leave unread.
  constexpr int kGames = 20000;
  using Clock = std::chrono::steady_clock;
  Clock::duration slowest{};
  const auto t0 = Clock::now();
  int g = 1;
  for (; g <= kGames && p->forfeit_cause(0).empty(); ++g) {
    for (const bool start : {true, false}) {
      const auto t = Clock::now();
      if (start)
        p->game_started(g, 0, static_cast<std::uint64_t>(g));
      else
        p->game_ended(g, s, -1);
      slowest = std::max(slowest, Clock::now() - t);
    }
  }
  const double slowest_s = std::chrono::duration<double>(slowest).count();
  const double all_s = std::chrono::duration<double>(Clock::now() - t0).count();
  CHECK_MESSAGE(slowest_s < 1.0, "the slowest hook took ", slowest_s, " s");
  CHECK_MESSAGE(all_s < 4.0, g, " games took ", all_s, " s");
  // Found out once its unread events passed the cap (about 6,500 games): its game is forfeited.
  CHECK(g < kGames);
  const std::string cause = p->forfeit_cause(0);
  CHECK_MESSAGE(cause.find("stopped reading its input") != std::string::npos, cause);
  CHECK(cause.find(dir.path.string()) == std::string::npos);  // causes reach reports and pages
  // Its decision is a forfeit at once, with no write to the stopped player.
  const State* states[1] = {&s};
  cfr::Rng rng(1);
  cfr::Rng* rngs[1] = {&rng};
  const int games[1] = {0};
  int actions[1] = {0};
  const auto t1 = Clock::now();
  p->choose_actions(states, rngs, games, actions);
  CHECK(actions[0] == BatchBot::kForfeit);
  CHECK(std::chrono::duration<double>(Clock::now() - t1).count() < 1.0);
  // The next game starts it again (it answers the hello): that game is live.
  p->game_started(kGames + 1, 0, 1);
  CHECK(p->forfeit_cause(kGames + 1).empty());
}
