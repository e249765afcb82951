#pragma once
// cfr-serve's games: a person against a bot, a checkpoint or an external program. Every game has an
// unguessable id (128 random bits); the opponents' moves, and everything that touches a game's
// state, run on one mover thread, never on the I/O threads: each round it takes every game waiting
// for its opponent, groups them by opponent, and asks each opponent for all of its moves at once
// (one network forward for all the games against a checkpoint).
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "apps/serve/api.h"
#include "engine/games/players.h"

namespace cfr::serve {

/// A match side by name (a bot, checkpoint:PATH, external:COMMAND): InputError when it cannot be made.
using PlayerFactory = std::function<lc::AnyPlayer(const std::string& name)>;

struct PlayOptions {
  lc::Rules rules{};
  std::size_t max_games = 10000;                       // live games at once; more: 503
  std::chrono::seconds idle_expiry{std::chrono::hours(2)};  // a game untouched this long is dropped
};

class GameRoom {
 public:
  GameRoom(PlayOptions opts, PlayerFactory factory);
  ~GameRoom();
  GameRoom(const GameRoom&) = delete;
  GameRoom& operator=(const GameRoom&) = delete;

  /// Called on the mover thread with an HTTP status and the body (a view, or {"error": ...}).
  using Done = std::function<void(int status, nlohmann::json body)>;
  /// Starts a game (the opponent moves first when the person takes seat 1); 201 and the view.
  void create(NewGameRequest req, Done done);
  /// The person's move, then the opponent's until the person is to move again or the game is over;
  /// 200 and the view, 404 unknown id, 409 over or not the person's turn, 422 an illegal action.
  void move(std::string id, int action, Done done);

  /// Any thread. ApiError 404 for an unknown id.
  nlohmann::json view(const std::string& id) const;
  /// The game as a transcript line (lc::transcript_line; cfr-arena --replay reads it).
  std::string transcript(const std::string& id) const;

  struct Stats {
    long games_created = 0, opponent_moves = 0, rounds = 0, largest_batch = 0;
  };
  Stats stats() const;
  std::size_t live_games() const;

 private:
  struct Game;
  struct Job;
  void worker();
  void run_jobs(std::vector<Job>& jobs);
  lc::AnyPlayer& player(const std::string& name);
  std::shared_ptr<Game> find(const std::string& id) const;
  nlohmann::json view_of(const Game& g) const;
  void expire_idle();

  PlayOptions opts_;
  PlayerFactory factory_;
  mutable std::mutex mu_;  // games_, jobs_, stop_, stats_
  std::condition_variable cv_;
  std::map<std::string, std::shared_ptr<Game>> games_;
  std::vector<Job> jobs_;
  bool stop_ = false;
  Stats stats_;
  // Mover thread only:
  std::map<std::string, lc::AnyPlayer> players_;
  int next_index_ = 0;
  std::thread thread_;
};

}  // namespace cfr::serve
