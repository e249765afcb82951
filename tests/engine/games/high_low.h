#pragma once
// High-low: the small game of docs/adding-a-game.md, added in the tests to show (and check) that
// a game written outside the engine gets everything generic the engine offers once it satisfies
// the concepts and is registered: conformance, the exact tree and best response, tabular CFR,
// coroutine traversals under every scheduler, and name dispatch.
//
// Rules: chance deals each player, independently, a high card (H) or a low one (L) with
// probability 1/2; each antes 1. Player 0 checks (0) or bets 1 (1); after a check the cards are
// shown; after a bet player 1 folds (0) or calls (1). The high card wins the pot; equal cards split it.
// Information-state key: own card letter, then the moves ("b" bet/call, "c" check/fold), e.g. "Lb".
// Encoding (5 floats): player one-hot (2), own card is high (1), then the first move one-hot (2).
#include <algorithm>
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "engine/core/errors.h"
#include "engine/core/game.h"
#include "engine/core/rng.h"

namespace cfr::testing {

class HighLow {
 public:
  static constexpr std::string_view kName = "high_low";
  static HighLow initial() { return HighLow(); }

  int current_player() const noexcept { return is_chance_node() ? kChancePlayer : is_terminal() ? 0 : moves_ % 2; }
  bool is_chance_node() const noexcept { return dealt_ < 2; }
  int chance_outcomes(std::span<ChanceOutcome> out) const {
    out[0] = {0, 0.5};  // the next player dealt gets L
    out[1] = {1, 0.5};  // or H
    return 2;
  }
  bool is_terminal() const noexcept { return !is_chance_node() && (moves_ == 2 || (moves_ == 1 && move_[0] == 0)); }
  ActionMask legal_mask() const noexcept { return is_terminal() ? 0 : 0b11; }
  int num_distinct_actions() const noexcept { return 2; }
  double returns(int p) const noexcept {
    if (!is_terminal()) return 0;
    const bool folded = moves_ == 2 && move_[1] == 0;
    const double pot_share = moves_ == 2 && !folded ? 2 : 1;  // each put in 1, or 2 after a call
    if (!folded && card_[0] == card_[1]) return 0;
    const int winner = folded || card_[0] > card_[1] ? 0 : 1;
    return p == winner ? pot_share : -pot_share;
  }
  int info_state_size() const noexcept { return 5; }
  void encode_info_state(int player, std::span<float> out) const {
    std::fill(out.begin(), out.begin() + 5, 0.0F);
    out[static_cast<std::size_t>(player)] = 1;
    out[2] = card_[static_cast<std::size_t>(player)];
    if (moves_ > 0) out[static_cast<std::size_t>(3 + move_[0])] = 1;
  }
  std::string info_state_key(int player) const {
    std::string k(1, card_[static_cast<std::size_t>(player)] == 1 ? 'H' : 'L');
    for (int i = 0; i < moves_; ++i) k += move_[static_cast<std::size_t>(i)] == 1 ? 'b' : 'c';
    return k;
  }
  void apply_action(int a) {
    if (a < 0 || a >= 2 || !mask_has(legal_mask(), a)) throw IllegalActionError("high_low: illegal action " + std::to_string(a));
    if (is_chance_node()) {
      card_[static_cast<std::size_t>(dealt_++)] = static_cast<std::int8_t>(a);
      return;
    }
    move_[static_cast<std::size_t>(moves_++)] = static_cast<std::int8_t>(a);
  }
  void check_invariants() const {
    CFR_CHECK(dealt_ >= 0 && dealt_ <= 2 && moves_ >= 0 && moves_ <= 2 && (dealt_ == 2 || moves_ == 0), "dealt {} moves {}",
              dealt_, moves_);
  }
  /// Re-deals the card `observer` cannot see.
  void resample_hidden(int observer, Rng& rng) {
    if (dealt_ == 2) card_[static_cast<std::size_t>(1 - observer)] = static_cast<std::int8_t>(rng.below(2));
  }

  friend bool operator==(const HighLow&, const HighLow&) = default;

 private:
  std::array<std::int8_t, 2> card_{};  // 1 = H, 0 = L
  std::int8_t dealt_ = 0;
  std::int8_t moves_ = 0;
  std::array<std::int8_t, 2> move_{};
};

static_assert(EnumerableGame<HighLow>);

}  // namespace cfr::testing
