// The information-state encoding of lost-cities.md §2. Block order and normalisers follow the
// reference exactly; tests/engine/games/golden_test.cc pins them against the reference's own output.
#include <algorithm>
#include <array>
#include <bit>
#include <cassert>

#include "engine/core/errors.h"
#include "engine/games/lost_cities.h"

namespace cfr::lc {

void State::encode(int observer, std::span<float> out, const EncodingOptions& opts) const {
  CFR_CHECK(static_cast<int>(out.size()) >= encoding_size(rules_, opts), "output span holds {} floats, the encoding needs {}",
            out.size(), encoding_size(rules_, opts));
  CFR_CHECK(observer == 0 || observer == 1, "observer {} is not 0 or 1", observer);
  encode_into(*this, observer, out.data(), opts);
}

void State::encode_world(int observer, std::span<float> out) const {
  const int n = world_encoding_size(rules_);
  CFR_CHECK(static_cast<int>(out.size()) >= n, "output span holds {} floats, the world encoding needs {}", out.size(), n);
  CFR_CHECK(observer == 0 || observer == 1, "observer {} is not 0 or 1", observer);
  std::fill_n(out.begin(), n, 0.0F);
  const int ids = rules_.n_colors * (rules_.n_ranks + 1);
  const int len = deck_len_;
  const bool observer_next = current_player_ == observer;  // the next deck draw is the mover's
  for (int i = 0; i < len; ++i) {
    const int depth = len - 1 - i;  // 0: the top
    const int id = card_id(rules_, deck_[static_cast<std::size_t>(i)]);
    const bool mine = ((depth % 2) == 0) == observer_next;
    out[static_cast<std::size_t>(mine ? id : ids + id)] += 1.0F;
    out[static_cast<std::size_t>(2 * ids + id)] += 1.0F - static_cast<float>(depth) / static_cast<float>(len);
  }
  out[static_cast<std::size_t>(3 * ids)] = static_cast<float>(len) / static_cast<float>(rules_.deck_size());
}

// `o` is restrict: the state's byte-sized fields could otherwise alias the float stores (char
// types alias anything), forcing a reload of every field after every store.
void State::encode_into(const State& st, int observer, float* __restrict o, const EncodingOptions& opts) noexcept {
  const Rules& r = st.rules_;
  const int C = r.n_colors, R = r.n_ranks, H = r.hand_size, HS = r.n_handshakes;
  const int me = observer, opp = 1 - observer;
  const auto& hand_ = st.hand_;
  const auto& hand_len_ = st.hand_len_;
  const auto& exp_ = st.exp_;
  const auto& pile_ = st.pile_;
  const auto& pile_len_ = st.pile_len_;
  const auto& public_count_ = st.public_count_;
  const auto& total_ = st.total_;
  const int deck_len_ = st.deck_len_;
  const int turn_count_ = st.turn_count_;
  const int current_player_ = st.current_player_;
  const Phase phase_ = st.phase_;
  const int pending_color_ = st.pending_color_;

  // Normalisers as reciprocals: a multiply instead of ~300 divisions per state (the results differ
  // from a division by at most one ulp, far inside the golden tolerance of 1e-6).
  const float deck_total = 1.0F / static_cast<float>(r.deck_size());
  const float max_exp_len = 1.0F / static_cast<float>(r.cards_per_color());
  const float score_denom = 1.0F / static_cast<float>(std::max(1, r.bonus_amount + R * (R + 1) * (HS + 1)));
  const float max_numeric_sum = 1.0F / static_cast<float>(std::max(1, r.color_face_sum()));
  const float turn_norm = 0.5F * deck_total;
  const float wager_norm = 1.0F / static_cast<float>(std::max(1, HS));
  const float fC = 1.0F / static_cast<float>(C), fR = 1.0F / static_cast<float>(R);

  float* const begin = o;
  const ActionMask legal = st.legal_mask();

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
    // An empty pile reads its (stale or zero) top slot and masks it out: no branch.
    const int n = pile_len_[c];
    const int nonempty = n > 0 ? 1 : 0;
    const Card top = pile_[c][(n - nonempty) & (kMaxPerColor - 1)];
    *o++ = static_cast<float>(n) * max_exp_len;
    *o++ = static_cast<float>(nonempty);
    *o++ = static_cast<float>(nonempty * (top.color() + 1)) * fC;
    *o++ = static_cast<float>(nonempty * top.rank()) * fR;
  }

  for (int c = 0; c < C; ++c)
    for (int k = 0; k <= R; ++k) *o++ = static_cast<float>(public_count_[c][k]);

  *o++ = static_cast<float>(total_[me]) * score_denom;
  *o++ = static_cast<float>(total_[opp]) * score_denom;
  *o++ = static_cast<float>(total_[me] - total_[opp]) * score_denom;
  *o++ = static_cast<float>(turn_count_) * turn_norm;

  for (int c = 0; c <= C; ++c) *o++ = (c == C ? pending_color_ == kNoColor : pending_color_ == c) ? 1.0F : 0.0F;

  for (int a = 0; a < r.action_size(); ++a) *o++ = mask_has(legal, a) ? 1.0F : 0.0F;

  if (opts.derived_playability) {
    // One pass over the hand gathers every per-color count (no per-color rescans: the branches
    // on card colors were the encoder's main cost).
    std::array<int, kMaxColors> in_hand{}, wagers_in_hand{}, playable_n{}, playable_sum{}, dead_n{}, dead_sum{};
    for (int s = 0; s < hand_len_[me]; ++s) {
      const Card k = hand_[me][s];
      const int c = k.color();
      const int wager = static_cast<int>(k.is_wager());
      const int live = static_cast<int>(k.rank() > exp_[me][c].last_rank);  // a wager never is
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
      const int n = pile_len_[c];
      const Card t = pile_[c][(n - (n > 0 ? 1 : 0)) & (kMaxPerColor - 1)];
      const int top_playable = static_cast<int>(n > 0) & static_cast<int>(t.rank() > e.last_rank);
      const int top_face = top_playable * r.face(t.rank());
      const int unknown = std::max(0, r.cards_per_color() - in_hand[c] - exp_[0][c].len - exp_[1][c].len - pile_len_[c]);
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
      o[12] = static_cast<float>(top_playable);
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
      const int rank = c.rank(), last = e.last_rank;
      const int wager = static_cast<int>(rank == 0);
      const int legal_now = static_cast<int>(rank > last) | static_cast<int>((rank | last) == 0);
      const int started = static_cast<int>(last > 0);
      const int fresh = legal_now & (started ^ 1);
      o[0] = static_cast<float>(fresh);
      o[1] = static_cast<float>(fresh & (wager ^ 1));
      o[2] = static_cast<float>(fresh & wager & static_cast<int>(e.len == 0));
      o[3] = static_cast<float>(legal_now & started);
      o[4] = static_cast<float>((wager ^ 1) & (legal_now ^ 1));
      o[5] = static_cast<float>(wager & fresh);
      o += 6;
    }
  }

  if (opts.opponent_known_cards) {
    // Counts, unscaled like the public histogram (a wager may be known twice).
    std::fill(o, o + C * (R + 1), 0.0F);
    for (unsigned m = st.known_[opp]; m != 0; m &= m - 1) {
      const Card k = hand_[opp][std::countr_zero(m)];
      o[k.color() * (R + 1) + k.rank()] += 1.0F;
    }
    o += C * (R + 1);
  }

  if (opts.slot_cards) {
    const int per_slot = C + R + 5;
    std::fill(o, o + H * per_slot, 0.0F);
    for (int s = 0; s < hand_len_[me]; ++s) {
      const Card k = hand_[me][s];
      float* const slot = o + s * per_slot;
      slot[k.color()] = 1.0F;
      slot[C + k.rank()] = 1.0F;
      const Expedition& mine = exp_[me][k.color()];
      const Expedition& theirs = exp_[opp][k.color()];
      slot[C + R + 1] = static_cast<float>(mine.len) * max_exp_len;
      slot[C + R + 2] = static_cast<float>(mine.last_rank) * fR;
      slot[C + R + 3] = static_cast<float>(theirs.len) * max_exp_len;
      slot[C + R + 4] = static_cast<float>(theirs.last_rank) * fR;
    }
    o += H * per_slot;
  }
  (void)begin;
  assert(o - begin == encoding_size(r, opts));
}

}  // namespace cfr::lc
