// The information-state encoding of lost-cities.md §2. Block order and normalisers follow the
// reference exactly; tests/engine/golden_test.cc pins them against the reference's own output.
#include <algorithm>
#include <array>

#include "engine/errors.h"
#include "engine/lost_cities.h"

namespace cfr::lc {

void State::encode(int observer, std::span<float> out, const EncodingOptions& opts) const {
  const Rules& r = rules_;
  const int C = r.n_colors, R = r.n_ranks, H = r.hand_size, HS = r.n_handshakes;
  CFR_CHECK(static_cast<int>(out.size()) >= encoding_size(r, opts),
            "output span holds {} floats, the encoding needs {}", out.size(), encoding_size(r, opts));
  CFR_CHECK(observer == 0 || observer == 1, "observer {} is not 0 or 1", observer);
  const int me = observer, opp = 1 - observer;

  // Normalisers as reciprocals: a multiply instead of ~300 divisions per state (the results differ
  // from a division by at most one ulp, far inside the golden tolerance of 1e-6).
  const float deck_total = 1.0F / static_cast<float>(r.deck_size());
  const float max_exp_len = 1.0F / static_cast<float>(r.cards_per_color());
  const float score_denom =
      1.0F / static_cast<float>(std::max(1, r.bonus_amount + R * (R + 1) * (HS + 1)));
  const float max_numeric_sum = 1.0F / static_cast<float>(std::max(1, r.color_face_sum()));
  const float turn_norm = 0.5F * deck_total;
  const float wager_norm = 1.0F / static_cast<float>(std::max(1, HS));
  const float fC = 1.0F / static_cast<float>(C), fR = 1.0F / static_cast<float>(R);

  float* o = out.data();
  const ActionMask legal = legal_mask();

  *o++ = phase_ == Phase::kCard ? 1.0F : 0.0F;
  *o++ = phase_ == Phase::kDraw ? 1.0F : 0.0F;
  *o++ = static_cast<float>(current_player_);
  *o++ = static_cast<float>(observer);
  *o++ = static_cast<float>(deck_len_) * deck_total;

  for (int s = 0; s < H; ++s) {
    if (s < hand_len_[me]) {
      const Card c = hand_[me][s];
      *o++ = 1.0F;
      *o++ = static_cast<float>(c.color() + 1) * fC;
      *o++ = static_cast<float>(c.rank()) * fR;
    } else {
      *o++ = 0.0F;
      *o++ = 0.0F;
      *o++ = 0.0F;
    }
  }

  for (int p = 0; p < 2; ++p)
    for (int c = 0; c < C; ++c) {
      const Expedition& e = exp_[p][c];
      *o++ = static_cast<float>(e.len) * max_exp_len;
      *o++ = static_cast<float>(e.last_rank) * fR;
      *o++ = static_cast<float>(e.wagers) * wager_norm;
      *o++ = static_cast<float>(e.score) * score_denom;
    }

  for (int c = 0; c < C; ++c) {
    const int n = pile_len_[c];
    *o++ = static_cast<float>(n) * max_exp_len;
    *o++ = n > 0 ? 1.0F : 0.0F;
    *o++ = n > 0 ? static_cast<float>(pile_[c][n - 1].color() + 1) * fC : 0.0F;
    *o++ = n > 0 ? static_cast<float>(pile_[c][n - 1].rank()) * fR : 0.0F;
  }

  for (int c = 0; c < C; ++c)
    for (int k = 0; k <= R; ++k) *o++ = static_cast<float>(public_count_[c][k]);

  *o++ = static_cast<float>(total_[me]) * score_denom;
  *o++ = static_cast<float>(total_[opp]) * score_denom;
  *o++ = static_cast<float>(total_[me] - total_[opp]) * score_denom;
  *o++ = static_cast<float>(turn_count_) * turn_norm;

  for (int c = 0; c <= C; ++c)
    *o++ = (c == C ? pending_color_ == kNoColor : pending_color_ == c) ? 1.0F : 0.0F;

  for (int a = 0; a < r.action_size(); ++a) *o++ = mask_has(legal, a) ? 1.0F : 0.0F;

  if (opts.derived_playability) {
    // One pass over the hand gathers every per-color count (no per-color rescans: the branches
    // on card colors were the encoder's main cost).
    std::array<int, kMaxColors> in_hand{}, wagers_in_hand{}, playable_n{}, playable_sum{}, dead_n{},
        dead_sum{};
    for (int s = 0; s < hand_len_[me]; ++s) {
      const Card k = hand_[me][s];
      const int c = k.color();
      const int wager = k.is_wager() ? 1 : 0;
      const int live = (!wager && k.rank() > exp_[me][c].last_rank) ? 1 : 0;
      const int dead = 1 - wager - live;
      const int face = r.face(k.rank());
      in_hand[c] += 1;
      wagers_in_hand[c] += wager;
      playable_n[c] += live;
      playable_sum[c] += live * face;
      dead_n[c] += dead;
      dead_sum[c] += dead * face;
    }
    for (int c = 0; c < C; ++c) {
      const Expedition& e = exp_[me][c];
      bool top_playable = false;
      int top_face = 0;
      if (pile_len_[c] > 0) {
        const Card t = pile_[c][pile_len_[c] - 1];
        if (!t.is_wager() && t.rank() > e.last_rank) {
          top_playable = true;
          top_face = r.face(t.rank());
        }
      }
      const int unknown = std::max(
          0, r.cards_per_color() - in_hand[c] - exp_[0][c].len - exp_[1][c].len - pile_len_[c]);
      o[0] = e.len == 0 ? 1.0F : 0.0F;
      o[1] = (e.len > 0 && e.last_rank == 0) ? 1.0F : 0.0F;
      o[2] = static_cast<float>(e.face_sum) * max_numeric_sum;
      o[3] = static_cast<float>(e.wagers) * wager_norm;
      o[4] = static_cast<float>(e.len) * max_exp_len;
      o[5] = static_cast<float>(e.last_rank) * max_numeric_sum;
      o[6] = static_cast<float>(in_hand[c]) * max_exp_len;
      o[7] = static_cast<float>(wagers_in_hand[c]) * wager_norm;
      o[8] = static_cast<float>(playable_sum[c]) * max_numeric_sum;
      o[9] = static_cast<float>(playable_n[c]) * max_exp_len;
      o[10] = static_cast<float>(dead_n[c]) * max_exp_len;
      o[11] = static_cast<float>(dead_sum[c]) * max_numeric_sum;
      o[12] = top_playable ? 1.0F : 0.0F;
      o[13] = static_cast<float>(top_face) * max_numeric_sum;
      o[14] = static_cast<float>(unknown) * max_exp_len;
      o += 15;
    }
    *o++ = static_cast<float>(deck_len_) * deck_total;
    *o++ = static_cast<float>(turn_count_) * turn_norm;
    *o++ = static_cast<float>(deck_len_) * turn_norm;
  }

  if (opts.slot_aware_playability) {
    for (int s = 0; s < H; ++s) {
      if (s >= hand_len_[me]) {
        for (int k = 0; k < 6; ++k) *o++ = 0.0F;
        continue;
      }
      const Card c = hand_[me][s];
      const Expedition& e = exp_[me][c.color()];
      const bool legal_now = playable(me, c);
      const bool started = e.last_rank > 0;
      const bool wager = c.is_wager();
      *o++ = (legal_now && !started) ? 1.0F : 0.0F;
      *o++ = (legal_now && !started && !wager) ? 1.0F : 0.0F;
      *o++ = (legal_now && !started && wager && e.len == 0) ? 1.0F : 0.0F;
      *o++ = (legal_now && started) ? 1.0F : 0.0F;
      *o++ = (!wager && !legal_now) ? 1.0F : 0.0F;
      *o++ = (wager && legal_now && !started) ? 1.0F : 0.0F;
    }
  }
  CFR_DCHECK(o - out.data() == encoding_size(r, opts), "wrote {} floats", o - out.data());
}

}  // namespace cfr::lc
