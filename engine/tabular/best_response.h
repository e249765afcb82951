#pragma once
// Exact best responses, on-policy values, NashConv and exploitability of tabular policies on a
// GameTree (two-player zero-sum). NashConv = Σ_p (BR value_p − on-policy value_p);
// exploitability = NashConv / 2 (small-games.md).
#include <array>

#include "engine/tabular/policy.h"

namespace cfr {

/// Expected utility of player 0 when both players follow `policy`.
double expected_value(const TabularPolicy& policy);

/// Value for `player` of a best response against `policy` (the opponent's rows are used).
double best_response_value(const TabularPolicy& policy, int player);

struct ExploitabilityReport {
  double nash_conv = 0;
  double exploitability = 0;
  std::array<double, 2> br_value{};         // best-response value of each player
  std::array<double, 2> on_policy_value{};  // each player's value when both follow the policy
};

/// Validates the policy first (TabularPolicy::validate), then computes every figure exactly.
ExploitabilityReport exploitability(const TabularPolicy& policy);

}  // namespace cfr
