#include "engine/games/leduc.h"

#include <fmt/format.h>

#include "engine/core/errors.h"

namespace cfr::leduc {

bool State::is_chance_node() const noexcept { return !finished_ && (private_[1] < 0 || (round_ == 1 && public_ < 0)); }

int State::current_player() const noexcept { return is_chance_node() ? kChancePlayer : player_; }

int State::chance_outcomes(std::span<ChanceOutcome> out) const {
  CFR_CHECK(is_chance_node(), "not a chance node");
  int n = 0, free = 0;
  for (int c = 0; c < kNumCards; ++c) free += card_used(c) ? 0 : 1;
  for (int c = 0; c < kNumCards; ++c)
    if (!card_used(c)) out[n++] = {c, 1.0 / free};
  return n;
}

ActionMask State::legal_mask() const noexcept {
  if (finished_) return 0;
  if (is_chance_node()) {
    ActionMask m = 0;
    for (int c = 0; c < kNumCards; ++c)
      if (!card_used(c)) m |= ActionMask{1} << c;
    return m;
  }
  ActionMask m = ActionMask{1} << kCall;
  if (contrib_[player_] < contrib_[1 - player_]) m |= ActionMask{1} << kFold;
  if (raises_ < 2) m |= ActionMask{1} << kRaise;
  return m;
}

double State::returns(int p) const noexcept {
  if (!finished_) return 0.0;
  double u0;
  if (folded_ >= 0) {
    u0 = folded_ == 0 ? -contrib_[0] : contrib_[1];
  } else {
    const auto strength = [&](int q) {
      const int r = private_[q] / 2;
      return (r == public_ / 2 ? 100 : 0) + r;
    };
    const int s0 = strength(0), s1 = strength(1);
    u0 = s0 > s1 ? contrib_[1] : (s0 < s1 ? -contrib_[0] : 0);
  }
  return p == 0 ? u0 : -u0;
}

void State::apply_action(int action) {
  if (finished_) throw IllegalActionError(fmt::format("leduc: action {} after the game ended", action));
  if (is_chance_node()) {
    if (action < 0 || action >= kNumCards || card_used(action))
      throw IllegalActionError(fmt::format("leduc: illegal chance outcome {}", action));
    if (private_[0] < 0)
      private_[0] = static_cast<std::int8_t>(action);
    else if (private_[1] < 0)
      private_[1] = static_cast<std::int8_t>(action);
    else
      public_ = static_cast<std::int8_t>(action);
    return;
  }
  if (action < 0 || action > 2 || !mask_has(legal_mask(), action))
    throw IllegalActionError(fmt::format("leduc: illegal action {} for player {} in round {} (legal mask {:#x})", action,
                                         static_cast<int>(player_), round_ + 1, legal_mask()));
  const int me = player_, opp = 1 - player_;
  const bool first_of_round = hlen_[round_] == 0;
  history_[round_][hlen_[round_]++] = static_cast<std::int8_t>(action);
  if (action == kFold) {
    folded_ = static_cast<std::int8_t>(me);
    finished_ = true;
    return;
  }
  if (action == kRaise) {
    contrib_[me] = static_cast<std::int8_t>(contrib_[opp] + (round_ == 0 ? 2 : 4));
    ++raises_;
    player_ = static_cast<std::int8_t>(opp);
    return;
  }
  contrib_[me] = contrib_[opp];  // call (or check)
  if (first_of_round) {
    player_ = static_cast<std::int8_t>(opp);
    return;
  }
  if (round_ == 1) {
    finished_ = true;
    return;
  }
  round_ = 1;
  raises_ = 0;
  player_ = 0;
}

std::string State::info_state_key(int player) const {
  CFR_CHECK(player == 0 || player == 1, "player {}", player);
  CFR_CHECK(private_[player] >= 0, "player {} has no card yet", player);
  static constexpr char kLetter[3] = {'f', 'c', 'r'};
  std::string k = fmt::format("{}|", private_[player]);
  k += public_ >= 0 ? static_cast<char>('0' + public_) : '-';
  for (int r = 0; r < 2; ++r) {
    k.push_back('|');
    for (int i = 0; i < hlen_[r]; ++i) k.push_back(kLetter[history_[r][i]]);
  }
  return k;
}

void State::encode_info_state(int player, std::span<float> out) const {
  CFR_CHECK(out.size() >= kEncodingSize, "output span holds {} floats, needs {}", out.size(), kEncodingSize);
  CFR_CHECK(player == 0 || player == 1, "player {}", player);
  for (int i = 0; i < kEncodingSize; ++i) out[i] = 0.0F;
  out[player] = 1.0F;
  if (private_[player] >= 0) out[2 + private_[player] / 2] = 1.0F;
  if (public_ >= 0) out[2 + kNumRanks + public_ / 2] = 1.0F;
  constexpr int kHistory = 2 + 2 * kNumRanks;
  for (int r = 0; r < 2; ++r)
    for (int i = 0; i < hlen_[r]; ++i)
      if (history_[r][i] != kFold) out[kHistory + r * 8 + 2 * i + (history_[r][i] - 1)] = 1.0F;
}

void State::check_invariants() const {
  for (int p = 0; p < 2; ++p) {
    CFR_CHECK(private_[p] >= -1 && private_[p] < kNumCards, "private card {}", private_[p]);
    CFR_CHECK(contrib_[p] >= 1 && contrib_[p] <= 13, "contribution {} of player {}", contrib_[p], p);
  }
  CFR_CHECK(private_[0] < 0 || (private_[0] != private_[1] && private_[0] != public_), "a card is dealt twice");
  CFR_CHECK(private_[1] < 0 || private_[1] != public_, "a card is dealt twice");
  CFR_CHECK(raises_ <= 2, "{} raises in a round", raises_);
  CFR_CHECK(round_ == 0 || public_ >= 0 || is_chance_node(), "round 2 without a public card");
  if (finished_ && folded_ < 0) CFR_CHECK(contrib_[0] == contrib_[1], "showdown with unequal stakes");
}

void State::resample_hidden(int observer, Rng& rng) {
  const int o = 1 - observer;
  if (private_[o] < 0) return;
  int options[kNumCards], n = 0;
  for (int c = 0; c < kNumCards; ++c)
    if (c != private_[observer] && c != public_) options[n++] = c;
  private_[o] = static_cast<std::int8_t>(options[rng.below(static_cast<std::uint32_t>(n))]);
}

}  // namespace cfr::leduc
