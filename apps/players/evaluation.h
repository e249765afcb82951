#pragma once
// Deep CFR's exact evaluations on enumerable games (Kuhn, Leduc): the strategy network's policy
// on every information set, and how far an advantage network is from a perfect fit of its memory.
#include <vector>

#include "engine/memory/reservoir.h"
#include "engine/tabular/game_tree.h"
#include "engine/tabular/policy.h"
#include "engine/traversal/traversal.h"
#include "sched/evaluator.h"

namespace cfr {

/// The strategy network's policy on every information set of an enumerable game.
TabularPolicy strategy_policy(const GameTree& tree, Evaluator& strategy);
/// How far an advantage network's regret-matching policy is from that of a perfect fit of its
/// memory (the per-information-set weighted mean of the samples, sample_sums): the L1 distance
/// between the two policies, averaged over `player`'s information sets that hold samples.
double advantage_fit_l1(const GameTree& tree, Evaluator& advantage, const ReservoirMemory& memory, int player, bool linear,
                        RmFallback fallback, double rm_epsilon);

/// Single Deep CFR's average on an enumerable game (apps/run/snapshots.h): adds one
/// iteration's regret-matching policies (both players' advantage networks) into `sums`
/// (table_size() entries), each information set's row weighted by `weight` × its player's own
/// reach probability under that iteration's policy; snapshot_average_policy() normalises.
void add_snapshot_policy(const GameTree& tree, Evaluator& advantage0, Evaluator& advantage1, double weight, RmFallback fallback,
                         double rm_epsilon, std::vector<double>& sums);
TabularPolicy snapshot_average_policy(const GameTree& tree, const std::vector<double>& sums);

}  // namespace cfr
