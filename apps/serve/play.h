#pragma once
// cfr-serve's games: a person against an opponent the server offers (a bot, a shipped model, a
// run's checkpoint, the search player over a network, or an --opponent extra given on the command
// line). Every game has an unguessable id (128 random bits). The opponents' moves never run on the
// I/O thread: each opponent is a slot served by worker threads, one batch at a time, so that one
// forward decides all the games waiting for a network; quick opponents (bots, networks) and slow
// ones (search, external programs) have workers of their own, and slots take turns on them, so a
// slow opponent never holds another's games. Every opponent move has a time budget; limits per
// client address, on live games, on distinct opponents, and idle expiry keep one client from
// locking others out (docs/serve.md, "Security").
#include <array>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/thread_pool.hpp>
#include <nlohmann/json.hpp>

#include "apps/serve/api.h"
#include "engine/games/players.h"

namespace cfr::serve {

/// The search player's prior bonus as the server plays it: the nearest of 0 and the 1-2-5 series
/// 0.1, 0.2, 0.5, ..., 1000 (ties round down; negative: 0). A request's prior is rounded to it,
/// so search settings name a few dozen opponents, not one per number (each a network load).
double rounded_prior(double prior);

/// A match side from its spec (a bot's name, checkpoint:PATH, search:PATH?..., external:COMMAND):
/// InputError when it cannot be made. Specs come from the server's own offers, never a request.
using PlayerFactory = std::function<lc::AnyPlayer(const std::string& spec)>;

/// One opponent the server offers (GET /api/players). `spec` is what the factory makes (it may
/// hold a path or a command) and never leaves the server; requests name `id`.
struct Offer {
  std::string id;     // "heuristic_balanced", "model:NAME", "run:NAME", "extra:N"
  std::string label;  // what the pages show
  std::string kind;   // bot, model, run, extra
  std::string spec;
  bool network = false;  // a strategy network: also playable as the search player over it
  bool slow = false;     // may take long per move (external programs, search): the slow workers
};

/// The agent's move probabilities for the mover of a state (one per action id), for hints.
using HintFn = std::function<std::vector<float>(const lc::State& state)>;

struct PlayOptions {
  lc::Rules rules{};
  std::size_t max_games = 1000;                                     // live games at once, then the longest idle goes, else 503
  std::size_t max_games_per_client = 16;                            // live games of one client address, then 429
  std::chrono::seconds idle_expiry{std::chrono::minutes(10)};       // a game untouched this long is dropped
  std::chrono::milliseconds move_budget{std::chrono::seconds(10)};  // one opponent move, then the game ends
  std::size_t max_opponents = 32;                                   // distinct opponents loaded at once
  int fast_workers = 2, slow_workers = 2;
  SearchLimits search_limits;
  HintFn hint;             // empty: no hints (503)
  std::string hint_label;  // the hint agent's name
};

class GameRoom {
 public:
  /// The offer a request's id names, or ApiError 422.
  using Resolver = std::function<Offer(const std::string& id)>;
  GameRoom(PlayOptions opts, PlayerFactory factory, Resolver resolve);
  ~GameRoom();
  GameRoom(const GameRoom&) = delete;
  GameRoom& operator=(const GameRoom&) = delete;

  /// Called on a worker thread with an HTTP status and the body (a view, or {"error": ...}).
  using Done = std::function<void(int status, nlohmann::json body)>;
  /// Starts a game for `client` (an address); the opponent moves first when the person takes
  /// seat 1. ApiError at once (422 unknown opponent or search settings, 429 the client's limit,
  /// 503 full); else `done` gets 201 and the view.
  void create(const NewGameRequest& req, const std::string& client, Done done);
  /// The person's move, then the opponent's until the person is to move again or the game is
  /// over. ApiError at once: 404 unknown id, 409 over / not the person's turn / ended, 422 an
  /// illegal action; else `done` gets 200 and the view (502: the opponent forfeits; 504: it
  /// exceeded its move budget — the game is ended).
  void move(const std::string& id, int action, Done done);
  /// The game ends and is forgotten. ApiError 404 for an unknown id.
  void abandon(const std::string& id);
  /// The hint agent's probabilities over the person's legal moves: {"agent", "moves": [{id, name,
  /// p}] sorted by p}. ApiError 404 / 409 (not the person's turn) / 503 (no hint agent).
  void hint(const std::string& id, Done done);

  /// Any thread. ApiError 404 for an unknown id.
  nlohmann::json view(const std::string& id) const;
  /// The game as a transcript line (lc::transcript_line; cfr-arena --replay reads it).
  std::string transcript(const std::string& id) const;
  /// Drops the games idle longer than the expiry (the server's timer calls it).
  void expire_idle();

  struct Stats {
    long games_created = 0, opponent_moves = 0, rounds = 0, largest_batch = 0, expired = 0, evicted = 0, over_budget = 0,
         refused_client_limit = 0, refused_full = 0, opponent_failures = 0;
  };
  Stats stats() const;
  std::size_t live_games() const;

 private:
  struct Game;
  struct Slot;
  struct Turn;
  std::shared_ptr<Game> find(const std::string& id) const;
  nlohmann::json view_of(const Game& g) const;
  void forget_locked(const std::shared_ptr<Game>& g);  // mu_ held: the game leaves, its player hears
  void enqueue_locked(Slot& s, Turn t);                // mu_ held
  void serve_slot(std::shared_ptr<Slot> s);            // a worker
  void finish_turns(Slot& s, std::vector<Turn>& turns, std::vector<std::pair<int, nlohmann::json>>& results);
  /// The slot's player threw (out of memory, a library's error, a bug): logged, the batch's games
  /// are ended (500, a message without the reason: it may name a server path), the player is made
  /// anew for the next batch. The server goes on.
  void opponent_failed(Slot& s, std::vector<Turn>& turns, std::vector<std::pair<int, nlohmann::json>>& results,
                       std::string_view what);

  PlayOptions opts_;
  PlayerFactory factory_;
  Resolver resolve_;
  mutable std::mutex mu_;  // the maps, counters and slots' queues; a game's mutex may be taken under it, never the reverse
  std::map<std::string, std::shared_ptr<Game>> games_;
  std::map<std::string, std::shared_ptr<Slot>> slots_;
  std::map<std::string, std::size_t> client_games_;
  Stats stats_;
  int next_index_ = 0;
  std::mutex hint_mu_;  // the hint agent is one network: one caller at a time
  static constexpr int kMaxHintsInFlight = 4;
  /// The most games a slow slot (search, external programs) serves in one batch.
  static constexpr std::size_t kSlowRoundGames = 4;
  int hints_in_flight_ = 0;  // mu_
  boost::asio::thread_pool fast_, slow_;
};

}  // namespace cfr::serve
