#include "engine/games/kuhn.h"

#include <fmt/format.h>

#include "engine/core/errors.h"

namespace cfr::kuhn {

namespace {
constexpr char kCardLetter[kNumCards] = {'J', 'Q', 'K'};
}

bool State::is_terminal() const noexcept {
  if (hlen_ == 2) return !(history_[0] == kPass && history_[1] == kBet);  // pp, bp, bb end
  return hlen_ == 3;
}

int State::current_player() const noexcept {
  if (is_chance_node()) return kChancePlayer;
  return hlen_ % 2;
}

int State::chance_outcomes(std::span<ChanceOutcome> out) const {
  CFR_CHECK(is_chance_node(), "not a chance node");
  int n = 0;
  for (int c = 0; c < kNumCards; ++c)
    if (c != cards_[0]) out[n++] = {c, 1.0 / (kNumCards - dealt_)};
  return n;
}

ActionMask State::legal_mask() const noexcept {
  if (is_chance_node()) {
    ActionMask m = 0b111;
    if (dealt_ == 1) m &= ~(ActionMask{1} << cards_[0]);
    return m;
  }
  return is_terminal() ? 0 : 0b11;
}

double State::returns(int p) const noexcept {
  if (!is_terminal()) return 0.0;
  const int winner = cards_[0] > cards_[1] ? 0 : 1;  // showdown winner
  double u0;
  if (hlen_ == 2) {
    if (history_[0] == kPass)
      u0 = winner == 0 ? 1 : -1;  // pp
    else if (history_[1] == kPass)
      u0 = 1;  // bp: player 1 folds
    else
      u0 = winner == 0 ? 2 : -2;  // bb
  } else {
    u0 = history_[2] == kPass ? -1 : (winner == 0 ? 2 : -2);  // pbp: player 0 folds; pbb
  }
  return p == 0 ? u0 : -u0;
}

void State::apply_action(int action) {
  if (is_chance_node()) {
    if (action < 0 || action >= kNumCards || (dealt_ == 1 && action == cards_[0]))
      throw IllegalActionError(fmt::format("kuhn: illegal chance outcome {} (dealt {})", action, dealt_));
    cards_[dealt_++] = static_cast<std::int8_t>(action);
    return;
  }
  if (is_terminal() || (action != kPass && action != kBet))
    throw IllegalActionError(fmt::format("kuhn: illegal action {} at history length {}", action, hlen_));
  history_[hlen_++] = static_cast<std::int8_t>(action);
}

std::string State::info_state_key(int player) const {
  CFR_CHECK(player == 0 || player == 1, "player {}", player);
  CFR_CHECK(cards_[player] >= 0, "player {} has no card yet", player);
  std::string k{kCardLetter[cards_[player]], '|'};
  for (int i = 0; i < hlen_; ++i) k.push_back(history_[i] == kPass ? 'p' : 'b');
  return k;
}

void State::encode_info_state(int player, std::span<float> out) const {
  CFR_CHECK(out.size() >= kEncodingSize, "output span holds {} floats, needs {}", out.size(), kEncodingSize);
  CFR_CHECK(player == 0 || player == 1, "player {}", player);
  for (int i = 0; i < kEncodingSize; ++i) out[i] = 0.0F;
  out[player] = 1.0F;
  if (cards_[player] >= 0) out[2 + cards_[player]] = 1.0F;
  for (int i = 0; i < hlen_; ++i) out[5 + 2 * i + history_[i]] = 1.0F;
}

void State::check_invariants() const {
  CFR_CHECK(dealt_ >= 0 && dealt_ <= 2, "dealt {}", dealt_);
  CFR_CHECK(dealt_ == 2 || hlen_ == 0, "actions before the deal");
  if (dealt_ == 2) CFR_CHECK(cards_[0] != cards_[1], "both players hold card {}", cards_[0]);
  CFR_CHECK(hlen_ <= 3, "history length {}", hlen_);
}

void State::resample_hidden(int observer, Rng& rng) {
  const int o = 1 - observer;
  if (cards_[o] < 0) return;
  int options[kNumCards], n = 0;
  for (int c = 0; c < kNumCards; ++c)
    if (c != cards_[observer]) options[n++] = c;
  cards_[o] = static_cast<std::int8_t>(options[rng.below(static_cast<std::uint32_t>(n))]);
}

}  // namespace cfr::kuhn
