#pragma once
// Kuhn poker (Kuhn 1950; OpenSpiel's kuhn_poker with 2 players): cards J, Q, K (0, 1, 2), ante 1
// each, one private card each, actions pass (0) and bet (1), at most 3 actions after the deal.
// Chance deals player 0's card, then player 1's (action = card id). Utilities in {±1, ±2}.
//
// Information-state key (policy files, docs/policy-files.md): card letter, "|", then the
// history in p (pass/check/fold) and b (bet/call), e.g. "K|pb".
// Encoding (11 floats): player one-hot (2), own card one-hot (3), then for each of the 3 action
// positions a one-hot over (pass, bet).
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "engine/core/game.h"
#include "engine/core/rng.h"

namespace cfr::kuhn {

inline constexpr int kNumCards = 3;
inline constexpr int kPass = 0;
inline constexpr int kBet = 1;
inline constexpr int kEncodingSize = 11;

class State {
 public:
  static constexpr std::string_view kName = "kuhn";

  static State initial() { return State(); }

  int current_player() const noexcept;
  bool is_chance_node() const noexcept { return dealt_ < 2; }
  int chance_outcomes(std::span<ChanceOutcome> out) const;
  bool is_terminal() const noexcept;
  ActionMask legal_mask() const noexcept;
  int num_distinct_actions() const noexcept { return 2; }
  double returns(int p) const noexcept;
  int info_state_size() const noexcept { return kEncodingSize; }
  void encode_info_state(int player, std::span<float> out) const;
  std::string info_state_key(int player) const;
  void apply_action(int action);
  void check_invariants() const;
  /// Re-deals the card `observer` cannot see among those it does not hold.
  void resample_hidden(int observer, Rng& rng);

  int card(int p) const noexcept { return cards_[p]; }
  int history_size() const noexcept { return hlen_; }
  int history(int i) const noexcept { return history_[i]; }

  friend bool operator==(const State&, const State&) = default;

 private:
  std::array<std::int8_t, 2> cards_{-1, -1};
  std::array<std::int8_t, 3> history_{};
  std::int8_t dealt_ = 0;
  std::int8_t hlen_ = 0;
};

static_assert(EnumerableGame<State>);

}  // namespace cfr::kuhn
