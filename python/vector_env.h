#pragma once
// n games stepped together in C++, for the Python module's VectorEnv (module.cc): batched
// observations and legal-action masks written straight into caller-owned buffers (NumPy arrays),
// automatic reset, and optionally an opponent that moves inside C++: a built-in bot, or any batch
// player (a trained network, the search player, an external program: python/players.h) deciding
// every game where it is to move in one call per round.
//
// Slot i's k-th game (k = 0, 1, ...) is dealt with deal seed derive_seed(seed, i, k): it is the
// game Game::new_initial_state(seed = that deal seed) makes (Lost Cities: State::deal; Kuhn/Leduc:
// every chance node resolved from Rng(deal seed)). The opponent of that game draws from
// Rng(derive_seed(deal seed, 1)).
//
// Without an opponent (self-play) every decision is the caller's and the observation is the
// player to move's. With one, the caller plays `agent_seat` (0, 1, or −1: slot i's k-th game in
// seat (i + k) % 2) and the opponent's moves are made before step()/reset() return.
//
// With threads > 1, step() and reset() split the slots into contiguous ranges stepped on that
// many threads (started once); results are identical whatever the count (each slot owns its RNG
// streams; each thread its own bot).
//
// A batch opponent sees slot i's k-th game as game index (k·n + i) mod 2^31 − 1 and hears each
// game's events (game_started with its seat and the seed of its stream, every move, game_ended,
// match_ended when the environment is destroyed); its rounds and the moves run on the calling
// thread, the observations are written on `threads` threads.
//
// Thread-safety: step() and reset() touch no Python object and run with the GIL released (the
// module releases it); calls on one environment are serialised by its own mutex.
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

namespace cfr::lc {
class BatchBot;
}

namespace cfr::py {

class Game;

/// The most games a VectorEnv holds: 2^20 (each about 1 KB of state, plus its rows of the step's
/// arrays); more is an InputError naming n and this, before anything is allocated.
inline constexpr int kMaxVectorEnvGames = 1 << 20;

struct VectorEnvOptions {
  int n = 1;
  std::uint64_t seed = 0;
  std::string opponent;   // "" (self-play), a Lost Cities bot name, or "random" (any game)
  int agent_seat = 0;     // with an opponent: 0, 1 or −1 (alternate)
  int max_steps = 10000;  // a game still running after this many actions ends truncated
  int threads = 1;        // slots are split into this many contiguous ranges stepped in parallel
  // A batch opponent (Lost Cities): set, it is the opponent and `opponent` is its name. Its owner
  // keeps it alive for the environment's life; `opponent_lock` is held around each of its calls.
  lc::BatchBot* opponent_player = nullptr;
  std::mutex* opponent_lock = nullptr;
};

/// Where step()/reset() write: row-major arrays of n rows. reward: the return, at a game's end,
/// of the seat that acted for the caller (self-play: the player who made the last move; with an
/// opponent: agent_seat), 0 otherwise. done: the game ended in this step (terminal or truncated)
/// and the slot already holds the next game. current_player: who moves in the slot now.
struct StepBuffers {
  float* observation = nullptr;            // n × info_state_size
  bool* legal_mask = nullptr;              // n × num_distinct_actions
  float* reward = nullptr;                 // n
  bool* done = nullptr;                    // n
  bool* truncated = nullptr;               // n
  std::int32_t* current_player = nullptr;  // n
};

class VectorEnv {
 public:
  /// InputError for n < 1, a bad seat or max_steps, or an opponent the game does not have.
  VectorEnv(const Game& game, const VectorEnvOptions& opts);
  ~VectorEnv();
  VectorEnv(const VectorEnv&) = delete;
  VectorEnv& operator=(const VectorEnv&) = delete;

  int size() const noexcept;
  int observation_size() const noexcept;
  int num_actions() const noexcept;

  /// Deals every slot's next game (episode counters go on: reset() never repeats a deal) and writes
  /// the observations; reward, done and truncated are zero.
  void reset(const StepBuffers& out);
  /// actions[i] for slot i's player to move. Every action is checked first: an illegal one is an
  /// IllegalActionError naming the slot and the legal actions, and nothing is applied.
  void step(std::span<const std::int64_t> actions, const StepBuffers& out);
  /// The deal seed of each slot's current game.
  std::vector<std::uint64_t> deal_seeds() const;
  /// How many games each slot has finished.
  std::vector<std::int64_t> episodes() const;
  /// Each slot's current seat for the caller (self-play: the player to move).
  std::vector<std::int32_t> agent_seats() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
  mutable std::mutex mu_;  // serialises every call (step() runs without the GIL)
};

}  // namespace cfr::py
