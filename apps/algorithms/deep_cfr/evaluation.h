#pragma once
// Deep CFR's exact evaluations on enumerable games (Kuhn, Leduc): the strategy network's policy
// on every information set, and how far an advantage network is from a perfect fit of its memory.
#include "engine/tabular/game_tree.h"
#include "engine/tabular/policy.h"
#include "engine/memory/reservoir.h"
#include "engine/traversal/traversal.h"
#include "sched/evaluator.h"

namespace cfr {

/// The strategy network's policy on every information set of an enumerable game.
TabularPolicy strategy_policy(const GameTree& tree, Evaluator& strategy);
/// How far an advantage network's regret-matching policy is from that of a perfect fit of its
/// memory (the per-information-set weighted mean of the samples, sample_sums): the L1 distance
/// between the two policies, averaged over `player`'s information sets that hold samples.
double advantage_fit_l1(const GameTree& tree, Evaluator& advantage, const ReservoirMemory& memory, int player,
                        bool linear, RmFallback fallback, double rm_epsilon);

}  // namespace cfr
