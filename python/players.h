#pragma once
// Players by spec for the Python module (docs/python.md "Trained players"): what cfr.load_player
// returns, what cfr.match's names and VectorEnv's opponent make: the player factory cfr-arena and
// cfr-eval use (make_any_player, apps/players/: a bot's name, external:COMMAND, checkpoint:PATH,
// checkpoint-sampled:PATH, snapshots:RUN_DIR, search:CHECKPOINT?...). Without LibTorch
// (CFR_WITH_TORCH=OFF) only the bots and external players exist, and the trained kinds are an
// InputError saying so.
//
// Everything here is GIL-free C++: the module releases the GIL around it.
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "engine/games/players.h"

namespace cfr::py {

/// A player made from its spec for one set of Lost Cities rules. `mu` is held by whoever plays it
/// (a match, an environment's opponent rounds, a choose_actions call): one caller at a time.
struct SpecPlayer {
  std::string spec;
  lc::Rules rules;
  lc::AnyPlayer player;  // exactly one of player.bot (decides one move at a time) and player.batch
  std::mutex mu;

  bool batched() const noexcept { return player.batch != nullptr; }
  std::string name() const;
};

/// Whether this build plays trained players (checkpoint:, search:, snapshots:): it links LibTorch.
bool trained_players_available() noexcept;

/// The player `spec` for `rules`, as cfr-arena makes it. Every failure (an unknown bot, a missing
/// path, a path that is not a checkpoint, a checkpoint of another game or rules, a bad search
/// option, LibTorch's own errors reading a file) is an InputError naming the spec.
std::shared_ptr<SpecPlayer> load_spec_player(const std::string& spec, const lc::Rules& rules);

/// p's actions for `states` (none terminal, all of p's rules): one call of a batch player (a
/// network: one forward for all of them), or the bot move by move. A bot that samples draws from
/// Rng(seeds[i]); games[i] is the game index the player sees (the search player seeds its deals
/// with it). InputError for an external player (it plays in matches and environments only: it
/// needs each game's events) and for a forfeit. Locks p.mu.
std::vector<int> choose_actions(SpecPlayer& p, std::span<const lc::State* const> states, std::span<const std::uint64_t> seeds,
                                std::span<const int> games);

}  // namespace cfr::py
