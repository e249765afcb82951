#include "engine/games/bots.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "engine/core/errors.h"
#include "engine/games/expert_bot.h"
#include "engine/games/ismcts_bot.h"

namespace cfr::lc {

int random_legal_action(const State& s, Rng& rng) {
  const ActionMask m = s.legal_mask();
  CFR_CHECK(m != 0, "no legal action (terminal state)");
  return mask_nth(m, static_cast<int>(rng.below(static_cast<std::uint32_t>(mask_count(m)))));
}

namespace {

// Python's round(): half to even. nearbyint honours the current rounding mode, which is
// round-to-nearest-even unless someone changed it; the thresholds are derived once.
int round_half_even(double x) { return static_cast<int>(std::nearbyint(x)); }

class RandomBot final : public Bot {
 public:
  std::string_view name() const noexcept override { return "random"; }
  bool deterministic() const noexcept override { return false; }
  int choose_action(const State& s, Rng& rng) override { return random_legal_action(s, rng); }
};

class DiscardOnlyBot final : public Bot {
 public:
  std::string_view name() const noexcept override { return "discard_only"; }
  bool deterministic() const noexcept override { return true; }
  int choose_action(const State& s, Rng&) override {
    const ActionMask m = s.legal_mask();
    CFR_CHECK(m != 0, "no legal action (terminal state)");
    if (s.phase() == Phase::kCard) return 1;
    return std::countr_zero(m);  // the deck (2H) is below every pile id
  }
};

// One decision of the rule bot, from the mover's view. Every term is named as in §3.
class Decision {
 public:
  Decision(const State& s, const HeuristicThresholds& th)
      : s_(s),
        r_(s.rules()),
        th_(th),
        p_(s.current_player()),
        o_(1 - s.current_player()),
        deck_(s.deck_size()),
        diff_(s.total(p_) - s.total(o_)) {
    for (int c = 0; c < r_.n_colors; ++c) opened_ += s.expedition(p_, c).len > 0 ? 1 : 0;
    hand_n_ = s.hand_size(p_);
    for (int i = 0; i < hand_n_; ++i) hand_[i] = s.hand_card(p_, i);
  }

  int card_phase() const {
    const int H = hand_n_;
    // Rule 1: wager play.
    {
      int best = -1;
      double best_v = 0;
      for (int i = 0; i < H; ++i) {
        const Card x = hand_[i];
        if (!x.is_wager() || !mine(x) || deck_ <= th_.block) continue;
        const int c = x.color();
        int k = 0, sum = 0;
        playable_numerics(c, k, sum);
        if (k < th_.wager_min || sum < th_.wager_sum) continue;
        const double v = sum + 2.0 * k + bonus(c, 0, 1, x) - late_pen();
        if (best < 0 || v >= best_v) best = 2 * i, best_v = v;
      }
      if (best >= 0) return best;
    }
    // Rule 2: numeric play, to an existing or a new expedition.
    {
      int best = -1;
      double best_v = 0;
      for (int i = 0; i < H; ++i) {
        const Card x = hand_[i];
        if (x.is_wager() || !mine(x)) continue;
        const int c = x.color();
        const Expedition& e = s_.expedition(p_, c);
        const double face = r_.face(x.rank());
        double v;
        if (e.len > 0) {
          double P = e.face_sum + face;
          for (int j = 0; j < H; ++j)
            if (hand_[j].color() == c && !hand_[j].is_wager() && hand_[j].rank() > x.rank()) P += r_.face(hand_[j].rank());
          v = 7.0 + (th_.top - face);
          if (deck_ <= th_.L)
            v += 2.0 * face;
          else if (deck_ <= th_.D)
            v += 0.8 * face;
          if (P < th_.T) v -= 6.0;
          v += 3.0 * e.wagers + bonus(c, 0, 1, x);
        } else {
          if (deck_ <= th_.block) continue;
          const double pl = plan(c, x);
          if (!(pl > 0)) continue;
          int n = 0, S = 0, high = 0, hs = 0;
          opener_counts(c, x, n, S, high, hs);
          v = S + 2.0 * n + 1.5 * hs + pl + r_.expedition_penalty + std::max(0, th_.m - x.rank()) + bonus(c, 0, 1, x) -
              late_pen();
        }
        if (best < 0 || v >= best_v) best = 2 * i, best_v = v;
      }
      if (best >= 0) return best;
    }
    // Rule 3: forced open while nothing is opened.
    if (opened_ == 0) {
      int best = -1;
      double best_v = 0;
      for (int i = 0; i < H; ++i) {
        const Card x = hand_[i];
        if (x.is_wager() || !mine(x)) continue;
        const int c = x.color();
        int k = 0, sum = 0;
        for (int j = 0; j < H; ++j)
          if (hand_[j].color() == c && !hand_[j].is_wager()) ++k, sum += r_.face(hand_[j].rank());
        const double pl = plan(c, x);
        if (pl <= 0 && k < 2 && sum < 0.5 * th_.T && deck_ > th_.D) continue;
        const double v = pl + 0.2 * sum + (th_.top - r_.face(x.rank()));
        if (best < 0 || v >= best_v) best = 2 * i, best_v = v;
      }
      if (best >= 0) return best;
    }
    // Rule 4: discard.
    int best = -1;
    double best_v = 0;
    for (int i = 0; i < H; ++i) {
      const Card x = hand_[i];
      const bool me_can = mine(x), opp_can = theirs(x);
      const double v = -vme(x) - vopp(x) + (me_can ? 0.0 : 20.0) + (opp_can ? 0.0 : 6.0) - ((x.is_wager() && me_can) ? 4.0 : 0.0);
      if (best < 0 || v >= best_v) best = 2 * i + 1, best_v = v;
    }
    return best;
  }

  int draw_phase() const {
    const ActionMask legal = s_.legal_mask();
    int best = -1;
    double best_v = 0;
    for (int c = 0; c < r_.n_colors; ++c) {
      const int a = r_.pile_action(c);
      if (!mask_has(legal, a)) continue;
      const double v = pile_value(s_.pile_top(c));
      if (best < 0 || v >= best_v) best = a, best_v = v;
    }
    if (mask_has(legal, r_.draw_deck_action())) {
      double v = deck_ > th_.D ? 2.0 : deck_ > th_.L ? 1.0 : -1.0;
      v += diff_ > 0 ? 0.75 : -1.25;
      if (best < 0 || v >= best_v) best = r_.draw_deck_action(), best_v = v;
    }
    CFR_CHECK(best >= 0, "no legal draw");
    return best;
  }

 private:
  bool mine(Card x) const { return s_.playable(p_, x); }
  bool theirs(Card x) const { return s_.playable(o_, x); }
  bool empty(int c) const { return s_.expedition(p_, c).len == 0; }
  double late_pen() const { return deck_ <= th_.L ? 15.0 : deck_ <= th_.D ? 8.0 : 0.0; }
  double ncp() const {
    static constexpr double kPen[] = {0, 0, 6, 14, 28};
    return kPen[std::min(opened_, 4)];
  }

  // Count and face sum of the playable numerics of color c in my hand.
  void playable_numerics(int c, int& k, int& sum) const {
    k = 0, sum = 0;
    for (int j = 0; j < hand_n_; ++j) {
      const Card y = hand_[j];
      if (y.color() == c && !y.is_wager() && mine(y)) ++k, sum += r_.face(y.rank());
    }
  }

  // n, S, high: the c numerics in my hand with rank ≥ rank(y) (all of them for a wager);
  // hs: the c wagers in my hand.
  void opener_counts(int c, Card y, int& n, int& S, int& high, int& hs) const {
    n = S = high = hs = 0;
    for (int j = 0; j < hand_n_; ++j) {
      const Card z = hand_[j];
      if (z.color() != c) continue;
      if (z.is_wager()) {
        ++hs;
      } else if (z.rank() >= y.rank()) {
        ++n;
        S += r_.face(z.rank());
        if (z.rank() >= th_.m) ++high;
      }
    }
  }

  double bonus(int c, int extra, int committed, std::optional<Card> excl) const {
    if (!th_.bonus_possible) return 0.0;
    const int need = r_.bonus_threshold - (s_.expedition(p_, c).len + committed);
    if (need <= 0) return r_.bonus_amount;
    int cnt = 0;
    for (int j = 0; j < hand_n_; ++j) {
      const Card y = hand_[j];
      if (y.color() == c && mine(y) && !(excl && *excl == y)) ++cnt;
    }
    return cnt + extra >= need ? 0.4 * r_.bonus_amount : 0.0;
  }

  double commit(int c) const {
    const Expedition& e = s_.expedition(p_, c);
    int pn = 0, pw = 0, psum = 0;
    for (int j = 0; j < hand_n_; ++j) {
      const Card y = hand_[j];
      if (y.color() != c || !mine(y)) continue;
      if (y.is_wager()) {
        ++pw;
      } else {
        ++pn;
        psum += r_.face(y.rank());
      }
    }
    return 5.0 * (e.len > 0 ? 1 : 0) + 2.0 * e.wagers + 0.25 * e.face_sum + 1.2 * pn + 1.5 * pw + 0.15 * psum +
           0.05 * bonus(c, 0, 0, std::nullopt);
  }

  double interest(int c) const {
    const Expedition& e = s_.expedition(o_, c);
    double v =
        5.0 * (e.len > 0 ? 1 : 0) + 2.0 * e.wagers + 0.25 * e.face_sum + 0.4 * (e.last_rank > 0 ? r_.face(e.last_rank) : 0);
    if (s_.pile_size(c) > 0) {
      const Card t = s_.pile_top(c);
      if (theirs(t)) v += t.is_wager() ? 1.5 : 1.0 + 0.1 * r_.face(t.rank());
    }
    if (th_.bonus_possible && e.len + 1 >= r_.bonus_threshold) v += 0.2 * r_.bonus_amount;
    return v;
  }

  double vme(Card x) const {
    if (!mine(x)) return 0.0;
    const int c = x.color();
    const double cm = commit(c);
    if (x.is_wager()) return 7.0 + 1.2 * cm;
    return 0.8 * r_.face(x.rank()) + cm + (empty(c) ? 0.0 : 7.0) + ((cm >= 6.0 && x.rank() <= th_.m) ? 5.0 : 0.0);
  }

  double vopp(Card x) const {
    if (!theirs(x)) return 0.0;
    const double in = interest(x.color());
    if (x.is_wager()) return 8.0 + 1.5 * in;
    return r_.face(x.rank()) * (0.4 + 0.25 * in);
  }

  double plan(int c, Card y) const {
    int n = 0, S = 0, high = 0, hs = 0;
    opener_counts(c, y, n, S, high, hs);
    const double pen = ncp();
    const double fy = r_.face(y.rank());
    bool strong = n >= th_.min_open && S >= th_.T && (high >= 1 || S >= 0.85 * th_.M);
    bool speculative = opened_ <= 2 && n >= 2 && S >= 0.65 * th_.T && high >= 1;
    bool single_late = deck_ <= th_.D && n >= 1 && fy >= 8;
    const bool exceptional = n >= th_.min_open + 1 && S >= std::max(th_.B, 1.4 * th_.T) && high >= 2 && deck_ > th_.D;
    if (opened_ >= 4) strong = speculative = single_late = false;
    if (strong) return 6.0 + 0.25 * S + 0.8 * n + 0.5 * hs - pen;
    if (speculative) return 3.0 + 0.18 * S + 0.7 * n + 0.4 * hs - pen;
    if (opened_ == 3) return 0.0;
    if (exceptional) return 10.0 + 0.3 * S + n + 0.7 * high - pen;
    if (single_late) return 1.5 + 0.2 * fy - pen;
    return 0.0;
  }

  double support(Card x) const {
    const int c = x.color();
    int f = 0, fsum = 0, hs = 0;
    bool some_high = x.rank() >= th_.m;
    for (int j = 0; j < hand_n_; ++j) {
      const Card z = hand_[j];
      if (z.color() != c) continue;
      if (z.is_wager()) {
        ++hs;
      } else if (z.rank() >= x.rank()) {
        ++f;
        fsum += r_.face(z.rank());
        if (z.rank() >= th_.m) some_high = true;
      }
    }
    double v = 0.8 * f + hs + (x.rank() <= th_.m ? 1.5 : 0.0);
    const int sum = fsum + r_.face(x.rank());
    if (1 + f >= th_.min_open && sum >= th_.T && some_high)
      v += 4.0;
    else if (opened_ <= 2 && (f > 0 || hs > 0))
      v += 1.5;
    if (opened_ <= 2)
      v += 0.25 * plan(c, x);
    else if (opened_ == 3)
      v += 0.1 * std::max(0.0, plan(c, x));
    return v;
  }

  double pile_value(Card x) const {
    const int c = x.color();
    const bool c_empty = empty(c);
    const double vo = vopp(x);
    double base = 0.4 * vo + (diff_ <= 0 ? 1.5 : 0.0);
    if (c_empty && opened_ >= 4)
      base -= 20.0;
    else if (c_empty && opened_ == 3)
      base -= 10.0;
    const double sup = support(x);
    const bool deny = c_empty && opened_ >= 4 && sup < 6 && vo < 10 && diff_ > -15;
    const Expedition& e = s_.expedition(p_, c);
    if (x.is_wager()) {
      if (e.last_rank > 0) return base - 2.0;
      int k = 0, sum = 0;
      playable_numerics(c, k, sum);
      if (c_empty && (k < th_.wager_min || sum < th_.wager_sum)) return deny ? -8.0 : base + sup - 0.5;
      return base + 6.0 + commit(c);
    }
    double v;
    if (mine(x))
      v = base + r_.face(x.rank()) + 0.7 * commit(c) + (c_empty ? sup : 5.0);
    else
      v = base - 2.0 + (c_empty ? sup : 0.0);
    if (deny) return -8.0;
    return v + bonus(c, 1, 0, std::nullopt);
  }

  const State& s_;
  const Rules& r_;
  const HeuristicThresholds& th_;
  int p_, o_, deck_, diff_;
  int opened_ = 0;
  int hand_n_ = 0;
  Card hand_[kMaxHandSize]{};
};

class HeuristicBot final : public Bot {
 public:
  HeuristicBot(std::string name, const Rules& rules, const HeuristicParams& params, double noise)
      : name_(std::move(name)), th_(HeuristicThresholds::derive(rules, params)), noise_(noise) {}
  std::string_view name() const noexcept override { return name_; }
  bool deterministic() const noexcept override { return noise_ == 0.0; }
  int choose_action(const State& s, Rng& rng) override {
    CFR_CHECK(!s.is_terminal(), "no legal action (terminal state)");
    if (noise_ > 0.0 && rng.uniform() < noise_) return random_legal_action(s, rng);
    const Decision d(s, th_);
    return s.phase() == Phase::kCard ? d.card_phase() : d.draw_phase();
  }

 private:
  std::string name_;
  HeuristicThresholds th_;
  double noise_;
};

}  // namespace

HeuristicThresholds HeuristicThresholds::derive(const Rules& r, const HeuristicParams& p) {
  HeuristicThresholds t;
  const int deck = r.deck_size();
  t.m = (r.n_ranks + 1) / 2;
  t.M = r.color_face_sum();
  t.B = -r.expedition_penalty;
  t.top = r.min_rank + r.n_ranks;
  t.T = std::min(0.8 * t.B, p.open_target_ratio * t.M);
  t.min_open = std::clamp(round_half_even(r.hand_size * p.open_min_card_ratio), 1, r.hand_size);
  t.wager_min = std::clamp(round_half_even(r.hand_size * p.wager_min_card_ratio), 1, r.hand_size);
  t.wager_sum = t.T * p.wager_multiplier;
  t.L = std::max(1, round_half_even(0.20 * deck));
  t.D = std::max(t.L + 1, round_half_even(0.35 * deck));
  t.block = std::max(1, round_half_even(p.late_open_block_ratio * deck));
  t.bonus_possible = r.n_handshakes + r.n_ranks >= r.bonus_threshold;
  return t;
}

std::vector<std::string> bot_names() {
  return {"random",          "discard_only",    "heuristic_balanced", "heuristic_aggressive", "heuristic_cautious",
          "heuristic_noisy", "heuristic_expert"};
}

bool names_bot(std::string_view name) {
  if (name.starts_with(kExpertVariantPrefix) || names_ismcts(name)) return true;
  const auto names = bot_names();
  return std::find(names.begin(), names.end(), name) != names.end();
}

std::unique_ptr<Bot> make_bot(std::string_view name, const Rules& rules) {
  rules.validate();
  if (name.starts_with(kExpertVariantPrefix))
    return make_expert_bot(rules, parse_expert_params(name.substr(kExpertVariantPrefix.size())), std::string(name));
  if (names_ismcts(name))
    return make_ismcts_bot(rules, name == "ismcts" ? IsmctsParams{} : parse_ismcts_params(name.substr(kIsmctsPrefix.size())),
                           std::string(name));
  if (name == "random") return std::make_unique<RandomBot>();
  if (name == "discard_only") return std::make_unique<DiscardOnlyBot>();
  if (name == "heuristic_balanced")
    return std::make_unique<HeuristicBot>(std::string(name), rules, HeuristicParams::balanced(), 0.0);
  if (name == "heuristic_aggressive")
    return std::make_unique<HeuristicBot>(std::string(name), rules, HeuristicParams::aggressive(), 0.0);
  if (name == "heuristic_cautious")
    return std::make_unique<HeuristicBot>(std::string(name), rules, HeuristicParams::cautious(), 0.0);
  if (name == "heuristic_noisy")
    return std::make_unique<HeuristicBot>(std::string(name), rules, HeuristicParams::balanced(), 0.15);
  if (name == "heuristic_expert") return make_expert_bot(rules);
  throw InputError(fmt::format(
      "unknown bot '{}'; valid bots: {} (or heuristic_expert?key=value&...: a variant; ismcts[?key=value&...]: a search)", name,
      join_names(bot_names())));
}

}  // namespace cfr::lc
