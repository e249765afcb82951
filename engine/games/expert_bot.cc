#include "engine/games/expert_bot.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "engine/core/errors.h"
#include "engine/core/spec_query.h"

namespace cfr::lc {

namespace {

using Counts = std::array<std::array<std::uint8_t, kMaxRanks + 1>, kMaxColors>;

// Sorts a short array in descending order (insertion sort: hands hold at most 13 cards).
template <typename T>
void sort_desc(T* a, int n) {
  for (int i = 1; i < n; ++i)
    for (int j = i; j > 0 && a[j - 1] < a[j]; --j) std::swap(a[j - 1], a[j]);
}

// One decision from the mover's view (docs/lost-cities.md, "heuristic_expert"). `known` = cards
// known to be in the opponent's hand (taken from discard piles and not played since).
class ExpertDecision {
 public:
  ExpertDecision(const State& s, const ExpertParams& P, const Counts& known)
      : s_(s),
        r_(s.rules()),
        P_(P),
        p_(s.current_player()),
        o_(1 - s.current_player()),
        d_(s.deck_size()),
        card_phase_(s.phase() == Phase::kCard) {
    hn_ = s.hand_size(p_);
    for (int i = 0; i < hn_; ++i) hand_[i] = s.hand_card(p_, i);
    B_ = -r_.expedition_penalty;
    // Unseen = total − public − my hand − known in the opponent's hand (never below 0).
    int known_n = 0;
    for (int c = 0; c < r_.n_colors; ++c)
      for (int k = 0; k <= r_.n_ranks; ++k) {
        int n = (k == 0 ? r_.n_handshakes : 1) - s.public_count(c, k);
        for (int i = 0; i < hn_; ++i)
          if (hand_[i] == Card::make(c, k)) --n;
        const int kn = std::min<int>(known[c][k], std::max(0, n));
        known_[c][k] = static_cast<std::uint8_t>(kn);
        known_n += kn;
        unseen_[c][k] = std::max(0, n - kn);
        U_ += unseen_[c][k];
      }
    opp_unknown_ = std::max(0, s.hand_size(o_) - known_n);
    // My remaining card plays (this one included in the card phase) and the draws still usable.
    T_ = card_phase_ ? (d_ + 1) / 2 : (d_ - 1) / 2;
    p_draw_ = U_ > 0 ? std::max(0, T_ - 1) / static_cast<double>(U_) : 0.0;
    q_opp_ = U_ > 0 ? opp_unknown_ / static_cast<double>(U_) : 0.0;
    for (int c = 0; c < r_.n_colors; ++c) opened_ += s.expedition(p_, c).len > 0 ? 1 : 0;
    lateness_ = std::clamp(1.0 - d_ / (P_.late_ratio * r_.deck_size()), 0.0, 1.0);
    useful_ = useful_count();
    diff_est_ = estimate_diff();
    // Turns are short for the cards to play, or I am behind in the end game (then a pile draw
    // buys a turn only to play a card, never to wait for one).
    scarce_ = useful_ >= T_ || (lateness_ > 0 && diff_est_ <= 0);
    // Prolonging stops after 3·deck_size draws in all, so that every game ends.
    may_prolong_ = s.turn_count() < 3 * r_.deck_size();
  }

  int card_phase() const {
    double best = std::numeric_limits<double>::infinity();
    int best_a = -1;
    auto consider = [&](int a, double loss) {
      if (loss < best) best = loss, best_a = a;
    };
    for (int i = 0; i < hn_; ++i) {
      const Card x = hand_[i];
      const int c = x.color();
      const Expedition& e = s_.expedition(p_, c);
      // Play.
      if (s_.playable(p_, x)) {
        if (x.is_wager()) {
          const double gain = wager_gain(c, -1);
          if (gain > 0) consider(2 * i, -gain);
        } else if (e.len > 0) {
          const double mult = e.wagers + 1;
          double gap = 0;
          for (int j = 0; j < hn_; ++j) {
            const Card y = hand_[j];
            if (y.color() == c && !y.is_wager() && y.rank() > e.last_rank && y.rank() < x.rank()) gap += face(y) * mult;
          }
          if (!scarce_)
            for (int k = e.last_rank + 1; k < x.rank(); ++k)
              gap += unseen_[c][k] * p_draw_ * r_.face(k) * P_.future_factor * mult;
          const double tempo = P_.tempo + (scarce_ ? P_.scarce_tempo + 0.2 * face(x) * mult : 0.0);
          consider(2 * i, gap - tempo);
        } else if (opened_ < r_.n_colors) {
          const double v = proj(c, x.rank() - 1, 0, -1);
          const double margin = P_.open_margin + P_.open_extra * std::max(0, opened_ - P_.free_opens);
          if (v > margin) {
            double gap = 0;
            for (int j = 0; j < hn_; ++j) {
              const Card y = hand_[j];
              if (y.color() == c && !y.is_wager() && y.rank() < x.rank()) gap += face(y);
            }
            if (!scarce_)
              for (int k = 1; k < x.rank(); ++k) gap += unseen_[c][k] * p_draw_ * r_.face(k) * P_.future_factor;
            consider(2 * i, -(v - margin) + gap);
          }
        }
      }
      // Discard.
      const bool dead = keep(i) <= 0 && gift(x) <= 0;
      consider(2 * i + 1, keep(i) + gift(x) - (dead ? P_.dead_bonus : 0.0));
    }
    CFR_CHECK(best_a >= 0, "no card action");
    return best_a;
  }

  int draw_phase() {
    const ActionMask legal = s_.legal_mask();
    const int deck_a = r_.draw_deck_action();
    if (!may_prolong_ && mask_has(legal, deck_a)) return deck_a;
    // Drawing the last card ends the game: only when that wins; otherwise any pile prolongs it.
    if (d_ == 1 && mask_has(legal, deck_a)) {
      if (s_.total(p_) > s_.total(o_)) return deck_a;
    }
    const bool ahead = diff_est_ > 0;
    const double tempo = ahead ? P_.run_weight * lateness_ : (useful_ > 0 && may_prolong_ ? -P_.prolong_weight * lateness_ : 0.0);
    double best = -std::numeric_limits<double>::infinity();
    int best_a = -1;
    if (mask_has(legal, deck_a)) {
      best = deck_value() + tempo + 0.25;  // slight preference for the deck: games end
      best_a = deck_a;
      if (d_ == 1 && may_prolong_) best = -1e9;  // behind or level: the last card as a last resort
    }
    for (int c = 0; c < r_.n_colors; ++c) {
      const int a = r_.pile_action(c);
      if (!mask_has(legal, a)) continue;
      const Card x = s_.pile_top(c);
      hand_[hn_] = x;
      ++hn_;
      const double k = keep(hn_ - 1);
      --hn_;
      const double v = k + P_.deny * gift(x) - (k < 1.0 ? P_.hold_cost : 0.0) - tempo;
      if (v > best) best = v, best_a = a;
    }
    CFR_CHECK(best_a >= 0, "no legal draw");
    return best_a;
  }

 private:
  int face(Card x) const { return r_.face(x.rank()); }
  bool mine(Card x) const { return s_.playable(p_, x); }

  // Expected final score of my expedition c if I commit to it: the cards it holds, my hand's
  // numerics of c above rank f (slot `excl` left out), the expected face of unseen cards above f
  // that I can still draw, with `extra` more wagers; turns cap the count.
  double proj(int c, int f, int extra, int excl) const {
    const Expedition& e = s_.expedition(p_, c);
    int faces[kMaxHandSize + 1];
    int n = 0, hw = 0;
    for (int j = 0; j < hn_; ++j) {
      if (j == excl) continue;
      const Card y = hand_[j];
      if (y.color() != c) continue;
      if (y.is_wager()) {
        ++hw;
      } else if (y.rank() > f && y.rank() > e.last_rank) {
        faces[n++] = face(y);
      }
    }
    sort_desc(faces, n);
    const int turns = std::max(1, T_ - extra);
    const int cnt = std::min(n, turns);
    double sum = 0;
    for (int j = 0; j < cnt; ++j) sum += faces[j];
    double fsum = 0, fcount = 0;
    for (int k = std::max(f, static_cast<int>(e.last_rank)) + 1; k <= r_.n_ranks; ++k)
      if (unseen_[c][k] > 0) fsum += unseen_[c][k] * p_draw_ * r_.face(k), fcount += unseen_[c][k] * p_draw_;
    const double slots = std::max(0, turns - cnt);
    const double scale = fcount > slots ? (fcount > 0 ? slots / fcount : 0.0) : 1.0;
    fsum *= scale * P_.future_factor;
    fcount *= scale;
    const double mult = e.wagers + 1 + extra;
    double v = (e.face_sum + sum + fsum - B_) * mult;
    if (r_.n_handshakes + r_.n_ranks >= r_.bonus_threshold) {
      const double sure = e.len + extra + cnt;
      if (sure >= r_.bonus_threshold)
        v += r_.bonus_amount;
      else if (sure + fcount >= r_.bonus_threshold)
        v += 0.5 * r_.bonus_amount;
    }
    (void)hw;
    return v;
  }

  // The lowest rank of my hand's numerics of c (slot excl left out), or 0 when none.
  int lowest(int c, int excl) const {
    int lo = 0;
    for (int j = 0; j < hn_; ++j) {
      const Card y = hand_[j];
      if (j == excl || y.color() != c || y.is_wager()) continue;
      if (lo == 0 || y.rank() < lo) lo = y.rank();
    }
    return lo;
  }

  // Value of opening c now or later with the hand (slot excl left out): the projected score from
  // the lowest hand numeric, 0 when that is not worth it.
  double open_value(int c, int excl) const {
    const int lo = lowest(c, excl);
    return std::max(0.0, proj(c, lo > 0 ? lo - 1 : 0, 0, excl));
  }

  // What one more wager on c adds (slot `excl`, the wager itself, left out of the hand counts);
  // 0 unless it is early, the colour has no numeric, and the support is strong.
  double wager_gain(int c, int excl) const {
    const Expedition& e = s_.expedition(p_, c);
    if (e.last_rank > 0 || d_ < P_.wager_deck_ratio * r_.deck_size()) return 0.0;
    int n = 0;
    for (int j = 0; j < hn_; ++j)
      if (j != excl && hand_[j].color() == c && !hand_[j].is_wager()) ++n;
    if (n < P_.wager_min_cards) return 0.0;
    const double base = proj(c, 0, 0, excl);
    const double unit = base / (e.wagers + 1);
    if (unit < P_.wager_margin) return 0.0;
    const double with = proj(c, 0, 1, excl);
    return with - std::max(0.0, base);
  }

  // What I lose by giving up hand slot i.
  double keep(int i) const {
    const Card x = hand_[i];
    const int c = x.color();
    const Expedition& e = s_.expedition(p_, c);
    if (!mine(x)) return 0.0;
    if (x.is_wager()) return std::max(0.0, wager_gain(c, -1) - wager_gain(c, i)) + 0.5 * (1.0 - lateness_);
    if (e.len > 0) {
      if (T_ <= 0) return 0.0;
      return face(x) * (e.wagers + 1.0);
    }
    const double with = open_value(c, -1), without = open_value(c, i);
    return std::max(0.0, with - without) + P_.option_value * face(x) * (1.0 - lateness_);
  }

  // What the opponent gains if x lies on top of its pile.
  double gift(Card x) const {
    if (!s_.playable(o_, x)) return 0.0;
    const int c = x.color();
    const Expedition& e = s_.expedition(o_, c);
    int kc = 0;
    for (int k = 0; k <= r_.n_ranks; ++k) kc += known_[c][k];
    if (x.is_wager()) return e.len > 0 ? P_.gift_open_flat + 4.0 : 1.0 + P_.gift_known * kc;
    if (e.len > 0) return face(x) * (e.wagers + 1.0) * P_.gift_open + P_.gift_open_flat;
    return face(x) * P_.gift_closed + P_.gift_known * kc;
  }

  // Hand numerics I can play on my open expeditions.
  int useful_count() const {
    int n = 0;
    for (int i = 0; i < hn_; ++i) {
      const Card x = hand_[i];
      if (!x.is_wager() && mine(x) && s_.expedition(p_, x.color()).len > 0) ++n;
    }
    return n;
  }

  // (my total + what my hand adds in the turns left) − (the opponent's total + its known cards
  // and the expected value of its unknown cards on its open expeditions).
  double estimate_diff() const {
    double mine_v[kMaxHandSize + 1];
    int n = 0;
    for (int i = 0; i < std::min(hn_, kMaxHandSize + 1); ++i) {
      const Card x = hand_[i];
      const Expedition& e = s_.expedition(p_, x.color());
      if (!x.is_wager() && mine(x) && e.len > 0) mine_v[n++] = face(x) * (e.wagers + 1.0);
    }
    sort_desc(mine_v, n);
    double pot_me = 0;
    for (int j = 0; j < std::min(n, std::max(0, T_)); ++j) pot_me += mine_v[j];
    double pot_o = 0, cnt_o = 0;
    for (int c = 0; c < r_.n_colors; ++c) {
      const Expedition& e = s_.expedition(o_, c);
      if (e.len == 0) continue;
      for (int k = e.last_rank + 1; k <= r_.n_ranks; ++k) {
        const double w = known_[c][k] + unseen_[c][k] * q_opp_;
        pot_o += w * r_.face(k) * (e.wagers + 1.0);
        cnt_o += w;
      }
    }
    const int t_opp = card_phase_ ? d_ / 2 : (d_ + 0) / 2;
    if (cnt_o > t_opp && cnt_o > 0) pot_o *= t_opp / cnt_o;
    return s_.total(p_) + pot_me - s_.total(o_) - pot_o;
  }

  // Expected keep value of the deck's next card.
  double deck_value() {
    if (U_ == 0) return 0.0;
    double sum = 0;
    for (int c = 0; c < r_.n_colors; ++c)
      for (int k = 0; k <= r_.n_ranks; ++k) {
        if (unseen_[c][k] == 0) continue;
        hand_[hn_] = Card::make(c, k);
        ++hn_;
        // A card of a colour I have not opened is speculative: its keep value counts less.
        const double w = s_.expedition(p_, c).len > 0 ? 1.0 : P_.deck_speculative;
        sum += unseen_[c][k] * w * keep(hn_ - 1);
        --hn_;
      }
    return sum / U_;
  }

  const State& s_;
  const Rules& r_;
  const ExpertParams& P_;
  int p_, o_, d_;
  bool card_phase_;
  Card hand_[kMaxHandSize + 1]{};
  int hn_ = 0;
  double B_ = 20;
  Counts known_{};
  int unseen_[kMaxColors][kMaxRanks + 1]{};
  int U_ = 0, opp_unknown_ = 0, T_ = 0, opened_ = 0, useful_ = 0;
  double p_draw_ = 0, q_opp_ = 0, lateness_ = 0, diff_est_ = 0;
  bool scarce_ = false, may_prolong_ = true;
};

// The opponent's hand cards the mover knows (taken from a discard pile, not played since), as
// counts per (color, rank): the state tracks them, so the bot keeps no memory of the game.
Counts known_opponent_cards(const State& s) {
  Counts known{};
  const int o = 1 - s.current_player();
  for (std::uint32_t m = s.known_mask(o); m != 0; m &= m - 1) {
    const Card x = s.hand_card(o, std::countr_zero(m));
    ++known[x.color()][x.rank()];
  }
  return known;
}

// Stateless: a decision reads only the state, so one bot serves any number of games and threads.
class ExpertBot final : public Bot {
 public:
  ExpertBot(const Rules& rules, const ExpertParams& params, std::string name)
      : rules_(rules), params_(params), name_(name.empty() ? "heuristic_expert" : std::move(name)) {}
  std::string_view name() const noexcept override { return name_; }
  bool deterministic() const noexcept override { return true; }
  int choose_action(const State& s, Rng&) override {
    CFR_CHECK(!s.is_terminal(), "no legal action (terminal state)");
    ExpertDecision d(s, params_, known_opponent_cards(s));
    return s.phase() == Phase::kCard ? d.card_phase() : d.draw_phase();
  }

 private:
  Rules rules_;
  ExpertParams params_;
  std::string name_;
};

/// One tunable weight of ExpertParams: its key, where it lives, and the range a spec may set.
struct ExpertKey {
  std::string_view key;
  double ExpertParams::*real = nullptr;
  int ExpertParams::*integer = nullptr;
  double lo, hi;
};

constexpr ExpertKey kExpertKeys[] = {
    {"future_factor", &ExpertParams::future_factor, nullptr, 0, 2},
    {"open_margin", &ExpertParams::open_margin, nullptr, -50, 50},
    {"open_extra", &ExpertParams::open_extra, nullptr, -50, 50},
    {"free_opens", nullptr, &ExpertParams::free_opens, 0, 5},
    {"wager_margin", &ExpertParams::wager_margin, nullptr, -50, 50},
    {"wager_deck_ratio", &ExpertParams::wager_deck_ratio, nullptr, 0, 1},
    {"wager_min_cards", nullptr, &ExpertParams::wager_min_cards, 0, 12},
    {"tempo", &ExpertParams::tempo, nullptr, -50, 50},
    {"scarce_tempo", &ExpertParams::scarce_tempo, nullptr, -50, 50},
    {"dead_bonus", &ExpertParams::dead_bonus, nullptr, -50, 50},
    {"gift_open", &ExpertParams::gift_open, nullptr, 0, 10},
    {"gift_open_flat", &ExpertParams::gift_open_flat, nullptr, -50, 50},
    {"gift_closed", &ExpertParams::gift_closed, nullptr, 0, 10},
    {"gift_known", &ExpertParams::gift_known, nullptr, 0, 10},
    {"option_value", &ExpertParams::option_value, nullptr, 0, 10},
    {"deny", &ExpertParams::deny, nullptr, 0, 10},
    {"hold_cost", &ExpertParams::hold_cost, nullptr, -50, 50},
    {"deck_speculative", &ExpertParams::deck_speculative, nullptr, 0, 10},
    {"late_ratio", &ExpertParams::late_ratio, nullptr, 0, 1},
    {"run_weight", &ExpertParams::run_weight, nullptr, -50, 50},
    {"prolong_weight", &ExpertParams::prolong_weight, nullptr, -50, 50},
};

std::string expert_key_list() {
  std::string out;
  for (const ExpertKey& k : kExpertKeys) out += fmt::format("{}{}", out.empty() ? "" : ", ", k.key);
  return out;
}

}  // namespace

ExpertParams parse_expert_params(std::string_view query) {
  constexpr std::string_view what = "heuristic_expert?";
  const std::string keys = expert_key_list();
  ExpertParams p;
  for (const QueryPair& kv : split_spec_query(query, what, keys)) {
    const ExpertKey* k =
        std::find_if(std::begin(kExpertKeys), std::end(kExpertKeys), [&](const ExpertKey& e) { return e.key == kv.key; });
    if (k == std::end(kExpertKeys)) throw InputError(fmt::format("{}: unknown key '{}' (keys: {})", what, kv.key, keys));
    const bool integral = k->integer != nullptr;
    const double v = spec_number(what, kv, k->lo, k->hi, integral);
    if (integral)
      p.*(k->integer) = static_cast<int>(v);
    else
      p.*(k->real) = v;
  }
  return p;
}

std::unique_ptr<Bot> make_expert_bot(const Rules& rules, const ExpertParams& params, std::string name) {
  rules.validate();
  return std::make_unique<ExpertBot>(rules, params, std::move(name));
}

}  // namespace cfr::lc
