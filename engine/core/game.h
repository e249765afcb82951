#pragma once
// The game concept every game of the engine satisfies (Lost Cities, Kuhn, Leduc), with
// OpenSpiel's vocabulary and invariants:
//   - a state is a plain value (copyable, no heap allocation per step);
//   - current_player() is 0 or 1 at decision nodes; is_terminal() states have no legal action;
//   - legal_mask() has bit a set iff action a is legal; apply_action(a) accepts exactly those
//     actions and throws IllegalActionError for any other;
//   - returns(p) is the utility of player p at a terminal state (zero-sum: returns(0) ==
//     -returns(1));
//   - encode_info_state(observer, out) writes info_state_size() floats that depend only on what
//     `observer` knows; resample_hidden(observer, rng) redraws what `observer` cannot see, so
//     that the conformance suite checks that claim for every game (tests/engine/games/conformance.h).
#include <bit>
#include <concepts>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace cfr {

class Rng;

/// Legal-action set as a bitmask: bit a is set iff action a is legal. Games have ≤ 64 actions.
using ActionMask = std::uint64_t;

inline constexpr int kMaxActionsAnyGame = 64;

/// Whether action a is in m; false for any a outside [0, 64) (a game's apply_action may pass
/// what it was given: shifting by a negative or too large amount is undefined).
constexpr bool mask_has(ActionMask m, int a) noexcept { return a >= 0 && a < kMaxActionsAnyGame && ((m >> a) & 1U); }
constexpr int mask_count(ActionMask m) noexcept { return std::popcount(m); }

/// The k-th (0-based) set bit of m. Precondition: k < popcount(m).
constexpr int mask_nth(ActionMask m, int k) noexcept {
  for (int i = 0; i < k; ++i) m &= m - 1;
  return std::countr_zero(m);
}

/// Writes the set bits of m in increasing order into out; returns how many.
inline int mask_to_actions(ActionMask m, std::span<int> out) noexcept {
  int n = 0;
  while (m != 0 && n < static_cast<int>(out.size())) {
    out[n++] = std::countr_zero(m);
    m &= m - 1;
  }
  return n;
}

template <class S>
concept GameState = std::copyable<S> && requires(const S& cs, S& s, int a, int p, std::span<float> out, Rng& rng) {
  { S::kName } -> std::convertible_to<std::string_view>;
  { cs.current_player() } -> std::convertible_to<int>;
  { cs.is_terminal() } -> std::convertible_to<bool>;
  { cs.legal_mask() } -> std::same_as<ActionMask>;
  { cs.num_distinct_actions() } -> std::convertible_to<int>;
  { cs.returns(p) } -> std::convertible_to<double>;
  { cs.info_state_size() } -> std::convertible_to<int>;
  cs.encode_info_state(p, out);
  s.apply_action(a);
  cs.check_invariants();      // throws CheckError when an internal invariant is broken
  s.resample_hidden(p, rng);  // a state `p` cannot tell from this one (same encoding for `p`)
};

/// current_player() at chance nodes.
inline constexpr int kChancePlayer = -1;

/// One outcome of a chance node: the action id that selects it and its probability.
struct ChanceOutcome {
  int action = 0;
  double prob = 0.0;
};

inline constexpr int kMaxChanceOutcomes = 64;

/// The action of one outcome drawn from `outcomes` with a uniform u in [0, 1) (the last outcome
/// absorbs rounding).
inline int pick_chance_outcome(std::span<const ChanceOutcome> outcomes, double u) noexcept {
  for (const ChanceOutcome& o : outcomes) {
    if (u < o.prob) return o.action;
    u -= o.prob;
  }
  return outcomes.back().action;
}

/// Games small enough to enumerate (Kuhn, Leduc): a fixed root, explicit chance nodes whose
/// outcomes are applied with apply_action, and information-set keys for tabular methods and
/// policy files. At a chance node legal_mask() is the set of outcome actions.
template <class S>
concept EnumerableGame = GameState<S> && requires(const S& cs, std::span<ChanceOutcome> out, int p) {
  { S::initial() } -> std::same_as<S>;
  { cs.is_chance_node() } -> std::convertible_to<bool>;
  { cs.chance_outcomes(out) } -> std::convertible_to<int>;
  { cs.info_state_key(p) } -> std::convertible_to<std::string>;
};

}  // namespace cfr
