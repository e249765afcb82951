#pragma once
// Leduc poker, OpenSpiel's rules (Southey et al. 2005): six cards J1 J2 Q1 Q2 K1 K2 (ids 0..5,
// rank = id / 2), ante 1 each, one private card each, two betting rounds with a public card dealt
// between them. Actions fold (0), call/check (1), raise (2); raise size 2 in round 1 and 4 in
// round 2; at most 2 raises per round; fold is legal only when facing a bet; player 0 acts first
// in both rounds. A round ends with a call that is not its first action (check-check, or a call
// of a raise). Showdown: pairing the public card wins, else the higher rank, equal ranks split.
// Chance: player 0's card, player 1's card, then the public card (action = card id).
//
// Information-state key: "<private>|<public>|<round 1>|<round 2>", card ids 0..5, public "-"
// before it is dealt, actions f/c/r, e.g. "3|-|r|", "0|4|cc|r".
// Encoding (24 floats): player one-hot (2), private rank one-hot (3), public rank one-hot (3),
// then for each round 4 positions × one-hot (call, raise). Ranks, not cards: suits never matter in
// Leduc (a pair is two equal ranks), so suit-isomorphic information sets — the same strategy in
// every equilibrium — share one input and a network pools their samples instead of learning the
// symmetry from twice to four times fewer samples each. Keys stay card-exact.
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "engine/core/game.h"
#include "engine/core/rng.h"

namespace cfr::leduc {

inline constexpr int kNumCards = 6;
inline constexpr int kFold = 0;
inline constexpr int kCall = 1;
inline constexpr int kRaise = 2;
inline constexpr int kMaxRoundActions = 4;
inline constexpr int kNumRanks = 3;
inline constexpr int kEncodingSize = 2 + kNumRanks + kNumRanks + 2 * kMaxRoundActions * 2;

class State {
 public:
  static constexpr std::string_view kName = "leduc";

  static State initial() { return State(); }

  int current_player() const noexcept;
  bool is_chance_node() const noexcept;
  int chance_outcomes(std::span<ChanceOutcome> out) const;
  bool is_terminal() const noexcept { return finished_; }
  ActionMask legal_mask() const noexcept;
  int num_distinct_actions() const noexcept { return 3; }
  double returns(int p) const noexcept;
  int info_state_size() const noexcept { return kEncodingSize; }
  void encode_info_state(int player, std::span<float> out) const;
  std::string info_state_key(int player) const;
  void apply_action(int action);
  void check_invariants() const;
  /// Re-deals the cards `observer` cannot see (the opponent's private card) consistently.
  void resample_hidden(int observer, Rng& rng);

  int private_card(int p) const noexcept { return private_[p]; }
  int public_card() const noexcept { return public_; }
  int round() const noexcept { return round_; }
  int contribution(int p) const noexcept { return contrib_[p]; }

  friend bool operator==(const State&, const State&) = default;

 private:
  bool card_used(int c) const noexcept { return private_[0] == c || private_[1] == c || public_ == c; }

  std::array<std::int8_t, 2> private_{-1, -1};
  std::int8_t public_ = -1;
  std::int8_t round_ = 0;
  std::int8_t player_ = 0;  // player to act at decision nodes
  std::int8_t raises_ = 0;  // raises in the current round
  std::array<std::int8_t, 2> contrib_{1, 1};
  std::array<std::array<std::int8_t, kMaxRoundActions>, 2> history_{};
  std::array<std::int8_t, 2> hlen_{};
  std::int8_t folded_ = -1;  // player who folded, or −1
  bool finished_ = false;
};

static_assert(EnumerableGame<State>);

}  // namespace cfr::leduc
