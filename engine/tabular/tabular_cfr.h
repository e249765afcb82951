#pragma once
// Tabular solvers for enumerable games, over a GameTree:
//   cfr       vanilla CFR (Zinkevich et al. 2007)
//   cfr+      CFR+ (Tammelin 2014): regret matching+, linear averaging
//   lcfr      linear CFR (Brown & Sandholm 2019): iteration t's regrets and policy weighted by t
//   es-mccfr  external-sampling MCCFR (Lanctot et al. 2009), simple averaging at opponent nodes
//   os-mccfr  outcome-sampling MCCFR (Lanctot et al. 2009), ε-exploration at the updated player
// All use alternating updates: each iteration updates player 0, then player 1, the current policy
// of a player being recomputed right after its pass (as OpenSpiel does). Regret matching falls back
// to the uniform policy when no regret is positive.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/rng.h"
#include "engine/tabular/game_tree.h"
#include "engine/tabular/policy.h"

namespace cfr {

enum class TabularAlgo { kCfr, kCfrPlus, kLinearCfr, kExternalSampling, kOutcomeSampling };

/// "cfr", "cfr+", "lcfr", "es-mccfr", "os-mccfr"; anything else is an InputError listing these.
TabularAlgo parse_tabular_algo(std::string_view name);
std::string_view to_string(TabularAlgo a);

struct TabularOptions {
  TabularAlgo algo = TabularAlgo::kCfr;
  std::uint64_t seed = 0;
  double os_epsilon = 0.6;  // outcome sampling's exploration at the updated player's nodes
};

class TabularSolver {
 public:
  TabularSolver(const GameTree& tree, const TabularOptions& opts);

  /// One iteration: a pass for player 0, then one for player 1.
  void run_iteration();
  int iteration() const noexcept { return iteration_; }
  /// Nodes visited so far (all passes).
  std::int64_t nodes_visited() const noexcept { return nodes_; }

  /// The normalised cumulative policy (uniform where nothing was accumulated).
  TabularPolicy average_policy() const;
  /// Regret matching of the current regrets.
  TabularPolicy current_policy() const;

 private:
  double cfr_walk(int n, int p, double reach_p, double reach_o, double regret_w, double avg_w);
  double es_walk(int n, int p);
  double os_walk(int n, int p, double my_reach, double opp_reach, double sample_reach);
  void regret_matching(int infoset, double* out) const;
  void refresh_current(int player);
  std::size_t at(int infoset, int action) const noexcept {
    return static_cast<std::size_t>(infoset) * static_cast<std::size_t>(A_) + static_cast<std::size_t>(action);
  }

  const GameTree& tree_;
  TabularOptions opts_;
  int A_;
  std::vector<double> regrets_, cumulative_, current_;
  int iteration_ = 0;
  std::int64_t nodes_ = 0;
  Rng rng_;
};

}  // namespace cfr
