#pragma once
// ismcts: a search bot that needs no network, for the evaluation pool (docs/lost-cities.md,
// "ismcts"). Single-observer information-set MCTS (Cowling, Powley, Whitehouse 2012): every
// iteration draws a deal consistent with what the mover has seen (State::resample_hidden),
// descends one tree of moves shared by all the deals (both seats' moves, a card move named by
// its card, not its hand slot, which holds other cards in other deals; a move is selectable only
// where it is legal in the iteration's deal, and its UCB term counts the iterations in which it
// was: availability), adds one node, finishes the game with a rule bot
// (`rollout`) and backs the result up, each node scoring it for the seat that chose its action.
// The move played is the root's most visited. With `bias` > 0 the rollout bot's move at each node
// is tried first and favoured by a progressive bias that fades with its visits.
//
// Like the other bots it keeps nothing between decisions (its node pool is reused, so a decision
// allocates nothing once the pool has grown) and draws every random number from the Rng it is
// given, so a match is reproducible from its seeds. Not thread-safe: one instance per thread.
#include <memory>
#include <string>
#include <string_view>

#include "engine/games/bots.h"

namespace cfr::lc {

struct IsmctsParams {
  // The defaults are the strongest setting measured (docs/strength.md, "ismcts: a search bot in the pool").
  int iters = 1000;                          // iterations (deals, tree descents, rollouts) a decision
  double c = 0.2;                            // UCB exploration constant (rewards in [0, 1])
  std::string rollout = "heuristic_expert";  // the rule bot that finishes every iteration's game
  int cap = 400;                             // rollout moves at most; then scored as the game stands
  /// The reward: "diff" = 1/2 + (score difference) / (2·scale), clamped to [0, 1]; "win" = 1, 1/2, 0.
  std::string value = "diff";
  double scale = 100;  // points of score difference that make a reward of 0 or 1 under "diff"
  /// Progressive bias toward the rollout bot's move at every tree node (Chaslot et al. 2008): it is
  /// the first child added there and its UCB gets bias / (visits + 1). 0: off (uniform expansion).
  double bias = 1;
};

/// The search itself, for a player that brings a prior over the root's moves (the search
/// player's `ismcts=N`: its network's probabilities). Not thread-safe: one decision at a time.
class IsmctsSearch {
 public:
  IsmctsSearch(const Rules& rules, IsmctsParams params);  // params checked by parse_ismcts_params
  ~IsmctsSearch();
  IsmctsSearch(IsmctsSearch&&) noexcept;
  IsmctsSearch& operator=(IsmctsSearch&&) noexcept;

  /// The move for the player to move in s. With root_prior (probabilities by action id, over s's
  /// legal actions) and root_weight > 0, the root's moves are biased by root_weight · prior / (visits
  /// + 1), its most probable untried move added first, in place of the rollout bot's move there.
  int decide(const State& s, Rng& rng, const float* root_prior = nullptr, double root_weight = 0);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// The spec's prefix: "ismcts?iters=2000&rollout=heuristic_expert".
inline constexpr std::string_view kIsmctsPrefix = "ismcts?";

/// Whether `name` is "ismcts" or starts with "ismcts?" (make_bot's branch; the keys are checked there).
bool names_ismcts(std::string_view name) noexcept;

/// IsmctsParams from the part after the '?'. Throws InputError naming the key and its range for an
/// unknown or repeated key, a value out of range, or a rollout that is not a rule bot (any bot
/// name or heuristic_expert variant of one key, the spec's &s being its own, but ismcts itself).
IsmctsParams parse_ismcts_params(std::string_view query);

/// The bot, named `name` in reports (its spec as given; "ismcts" by default).
std::unique_ptr<Bot> make_ismcts_bot(const Rules& rules, IsmctsParams params, std::string name = "ismcts");

}  // namespace cfr::lc
