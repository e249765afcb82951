#pragma once
// Lost Cities bots (lost-cities.md §3) behind one interface that a learned policy also uses.
//
// A Bot chooses a legal action for the player to move. Deterministic bots ignore the RNG; the
// others draw from it, so a match is reproducible from its seeds. Bots hold no per-game state:
// one instance may play any number of games, one call at a time (not thread-safe; use one
// instance per thread).
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/rng.h"
#include "engine/games/lost_cities.h"

namespace cfr::lc {

class Bot {
 public:
  virtual ~Bot() = default;
  virtual std::string_view name() const noexcept = 0;
  /// True when choose_action never consults the RNG (its choice is a function of the state).
  virtual bool deterministic() const noexcept = 0;
  /// A legal action for s.current_player(). Precondition: !s.is_terminal().
  virtual int choose_action(const State& s, Rng& rng) = 0;
};

/// Parameters of the rule bot (ratios of the table in lost-cities.md §3).
struct HeuristicParams {
  double open_target_ratio = 0.50;
  double open_min_card_ratio = 0.40;
  double wager_multiplier = 1.15;
  double wager_min_card_ratio = 0.34;
  double late_open_block_ratio = 0.20;

  static HeuristicParams balanced() { return {}; }
  static HeuristicParams aggressive() {
    return {.open_target_ratio = 0.42,
            .open_min_card_ratio = 0.30,
            .wager_multiplier = 1.00,
            .wager_min_card_ratio = 0.25,
            .late_open_block_ratio = 0.12};
  }
  static HeuristicParams cautious() {
    return {.open_target_ratio = 0.62,
            .open_min_card_ratio = 0.50,
            .wager_multiplier = 1.35,
            .wager_min_card_ratio = 0.45,
            .late_open_block_ratio = 0.30};
  }
};

/// Thresholds derived from the rules and the parameters (the bracketed values of §3).
struct HeuristicThresholds {
  int m = 0;     // middle rank
  double M = 0;  // face sum of one color's numerics
  double B = 0;  // −expedition_penalty
  int top = 0;   // min_rank + n_ranks
  double T = 0;  // open target
  int min_open = 0;
  int wager_min = 0;
  double wager_sum = 0;
  int L = 0;      // late deck size
  int D = 0;      // mid deck size
  int block = 0;  // no new expedition at or below this deck size
  bool bonus_possible = false;

  static HeuristicThresholds derive(const Rules& r, const HeuristicParams& p);
};

/// Names accepted by make_bot (beside heuristic_expert's variant specs, see names_bot).
std::vector<std::string> bot_names();

/// Whether make_bot takes `name` as a bot: one of bot_names(), a variant of heuristic_expert
/// "heuristic_expert?key=value&..." (expert_bot.h: parse_expert_params; make_bot checks its keys),
/// or the search bot "ismcts[?key=value&...]" (ismcts_bot.h; not in bot_names(): it costs
/// thousands of rule-bot games a decision).
bool names_bot(std::string_view name);

/// Creates a bot by name: random, discard_only, heuristic_balanced, heuristic_aggressive,
/// heuristic_cautious, heuristic_noisy, heuristic_expert (expert_bot.h), a variant of
/// heuristic_expert by its spec ("heuristic_expert?open_margin=8&free_opens=1", named so in
/// reports), or ismcts by its spec ("ismcts?iters=2000&rollout=heuristic_expert", ismcts_bot.h). Throws InputError naming the
/// valid choices otherwise, or what is wrong in a variant's spec.
std::unique_ptr<Bot> make_bot(std::string_view name, const Rules& rules);

/// A uniformly random legal action of s (the `random` bot's choice).
int random_legal_action(const State& s, Rng& rng);

}  // namespace cfr::lc
