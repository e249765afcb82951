#include "engine/games/lost_cities.h"

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <cstring>
#include <limits>

#include <fmt/format.h>

#include "engine/core/errors.h"

namespace cfr::lc {

namespace {

void require(bool ok, const char* knob, int value, const char* rule) {
  if (!ok) throw InputError(fmt::format("invalid rules: {} = {}: must be {}", knob, value, rule));
}

}  // namespace

void Rules::validate() const {
  require(n_colors > 0 && n_colors <= kMaxColors, "n_colors", n_colors, fmt::format("in [1, {}]", kMaxColors).c_str());
  require(n_ranks > 0 && n_ranks <= kMaxRanks, "n_ranks", n_ranks, fmt::format("in [1, {}]", kMaxRanks).c_str());
  require(min_rank > 0, "min_rank", min_rank, "> 0");
  require(n_handshakes >= 0 && n_handshakes <= kMaxHandshakes, "n_handshakes", n_handshakes,
          fmt::format("in [0, {}]", kMaxHandshakes).c_str());
  require(hand_size > 0 && hand_size <= kMaxHandSize, "hand_size", hand_size, fmt::format("in [1, {}]", kMaxHandSize).c_str());
  require(bonus_threshold > 0, "bonus_threshold", bonus_threshold, "> 0");
  if (deck_size() < 2 * hand_size)
    throw InputError(fmt::format("invalid rules: deck size n_colors·(n_ranks+n_handshakes) = {} must be ≥ 2·hand_size = {}",
                                 deck_size(), 2 * hand_size));
  // Faces and scores are stored in 16 bits.
  // (min_rank ≤ 1000 − n_ranks, not min_rank + n_ranks ≤ 1000: the sum overflows for huge min_rank.)
  require(min_rank <= 1000 - n_ranks, "min_rank", min_rank, "≤ 1000 − n_ranks");
  require(expedition_penalty >= -1000 && expedition_penalty <= 1000, "expedition_penalty", expedition_penalty,
          "in [−1000, 1000]");
  require(bonus_amount >= -1000 && bonus_amount <= 1000, "bonus_amount", bonus_amount, "in [−1000, 1000]");
  // The largest expedition score, (all faces + |penalty|) · (1 + wagers) + |bonus|, must fit too.
  const int max_faces = n_ranks * min_rank + n_ranks * (n_ranks - 1) / 2;
  const int max_score = (max_faces + std::abs(expedition_penalty)) * (1 + n_handshakes) + std::abs(bonus_amount);
  if (max_score > std::numeric_limits<std::int16_t>::max())
    throw InputError(fmt::format(
        "invalid rules: an expedition could score {} ((faces {} + |expedition_penalty|) · (1 + n_handshakes) + "
        "|bonus_amount|), more than the 32767 scores are stored in; lower min_rank, n_handshakes or the penalty/bonus",
        max_score, max_faces));
}

int card_id(const Rules& r, Card c) noexcept { return c.color() * (r.n_ranks + 1) + c.rank(); }

Card card_from_id(const Rules& r, int id) {
  const int n = r.n_colors * (r.n_ranks + 1);
  if (id < 0 || id >= n) throw InputError(fmt::format("card id {} out of range [0, {})", id, n));
  return Card::make(id / (r.n_ranks + 1), id % (r.n_ranks + 1));
}

std::string card_name(const Rules& r, Card c) {
  if (c.is_wager()) return fmt::format("c{}:W", c.color());
  return fmt::format("c{}:{}", c.color(), r.face(c.rank()));
}

int score_expedition(const Rules& r, std::span<const Card> cards) noexcept {
  if (cards.empty()) return 0;
  int faces = 0, wagers = 0;
  for (const Card c : cards) {
    if (c.is_wager())
      ++wagers;
    else
      faces += r.face(c.rank());
  }
  int s = (faces + r.expedition_penalty) * (wagers + 1);
  if (static_cast<int>(cards.size()) >= r.bonus_threshold) s += r.bonus_amount;
  return s;
}

std::vector<int> encoding_column_map(const Rules& r, const EncodingOptions& from, const EncodingOptions& to) {
  const auto a = encoding_blocks(r, from), b = encoding_blocks(r, to);
  std::vector<int> map;
  map.reserve(static_cast<std::size_t>(encoding_size(r, to)));
  int at = 0;  // the block's first float in `from`
  for (int k = 0; k < kEncodingBlocks; ++k) {
    if (a[k].on && !b[k].on) return {};
    for (int i = 0; b[k].on && i < b[k].size; ++i) map.push_back(a[k].on ? at + i : -1);
    if (a[k].on) at += a[k].size;
  }
  return map;
}

int State::score_of(const Rules& r, const Expedition& e) noexcept {
  if (e.len == 0) return 0;
  int s = (e.face_sum + r.expedition_penalty) * (e.wagers + 1);
  if (e.len >= r.bonus_threshold) s += r.bonus_amount;
  return s;
}

int State::shuffled_deck(const Rules& rules, std::uint64_t seed, std::span<int, kMaxDeck> ids) {
  rules.validate();
  int n = 0;
  for (int c = 0; c < rules.n_colors; ++c) {
    for (int w = 0; w < rules.n_handshakes; ++w) ids[n++] = card_id(rules, Card::make(c, 0));
    for (int rk = 1; rk <= rules.n_ranks; ++rk) ids[n++] = card_id(rules, Card::make(c, rk));
  }
  Rng rng(seed);
  for (int i = n - 1; i > 0; --i) std::swap(ids[i], ids[rng.below(static_cast<std::uint32_t>(i + 1))]);
  return n;
}

State State::deal(const Rules& rules, std::uint64_t seed) {
  std::array<int, kMaxDeck> ids{};
  const int n = shuffled_deck(rules, seed, ids);
  return from_deck(rules, std::span<const int>(ids.data(), n));
}

State State::from_deck(const Rules& rules, std::span<const int> deck_ids) {
  rules.validate();
  if (static_cast<int>(deck_ids.size()) != rules.deck_size())
    throw InputError(fmt::format("deck has {} cards; the rules need {}", deck_ids.size(), rules.deck_size()));
  State s;
  s.rules_ = rules;
  std::array<std::array<int, kMaxRanks + 1>, kMaxColors> counts{};
  for (std::size_t i = 0; i < deck_ids.size(); ++i) {
    Card c;
    try {
      c = card_from_id(rules, deck_ids[i]);
    } catch (const InputError& e) {
      throw InputError(fmt::format("deck[{}]: {}", i, e.what()));
    }
    s.deck_[i] = c;
    const int expected = c.is_wager() ? rules.n_handshakes : 1;
    if (++counts[c.color()][c.rank()] > expected)
      throw InputError(fmt::format("deck[{}]: card id {} appears more than {} time(s)", i, deck_ids[i], expected));
  }
  s.deck_len_ = static_cast<std::uint8_t>(deck_ids.size());
  for (int round = 0; round < rules.hand_size; ++round)
    for (int p = 0; p < 2; ++p) s.hand_[p][s.hand_len_[p]++] = s.deck_[--s.deck_len_];
  return s;
}

ActionMask State::legal_mask() const noexcept {
  if (deck_len_ == 0) return 0;
  if (phase_ == Phase::kCard) {
    // Branch-free: every occupied slot may be discarded (odd ids); slot i may be played (2i) iff
    // its rank is above the expedition's last numeric rank, or it is a wager on an expedition
    // with no numeric yet.
    const int p = current_player_;
    const int n = hand_len_[p];
    ActionMask m = 0xAAAAAAAAAAAAAAAAULL & ((ActionMask{1} << (2 * n)) - 1);
    for (int i = 0; i < n; ++i) {
      const Card c = hand_[p][i];
      const int last = exp_[p][c.color()].last_rank;
      const int rank = c.rank();
      const ActionMask ok = static_cast<ActionMask>((rank > last) | ((rank | last) == 0));
      m |= ok << (2 * i);
    }
    return m;
  }
  const int base = rules_.draw_deck_action();
  ActionMask piles = nonempty_piles_;
  if (pending_color_ != kNoColor) piles &= ~(ActionMask{1} << pending_color_);
  return (ActionMask{1} << base) | (piles << (base + 1));
}

void State::throw_illegal(int action) const {
  throw IllegalActionError(fmt::format("illegal action {} for player {} in the {} phase at move {} (legal mask {:#x})", action,
                                       static_cast<int>(current_player_), phase_ == Phase::kCard ? "CARD" : "DRAW", move_count_,
                                       legal_mask()));
}

void State::apply_action(int action) {
  if (deck_len_ == 0 || action < 0) throw_illegal(action);
  const int p = current_player_;
  if (phase_ == Phase::kCard) {
    const int slot = action >> 1;
    if (slot >= hand_len_[p]) throw_illegal(action);
    const Card c = hand_[p][slot];
    const int color = c.color();
    if ((action & 1) == 0) {
      if (!playable(p, c)) throw_illegal(action);
      Expedition& e = exp_[p][color];
      exp_cards_[p][color][e.len] = c;
      ++e.len;
      if (c.is_wager()) {
        ++e.wagers;
      } else {
        e.last_rank = static_cast<std::uint8_t>(c.rank());
        e.face_sum = static_cast<std::int16_t>(e.face_sum + rules_.face(c.rank()));
      }
      const int score = score_of(rules_, e);
      total_[p] += score - e.score;
      e.score = static_cast<std::int16_t>(score);
    } else {
      pile_[color][pile_len_[color]++] = c;
      nonempty_piles_ = static_cast<std::uint8_t>(nonempty_piles_ | (1U << color));
      pending_color_ = static_cast<std::uint8_t>(color);
    }
    ++public_count_[color][c.rank()];
    for (int i = slot + 1; i < hand_len_[p]; ++i) hand_[p][i - 1] = hand_[p][i];
    --hand_len_[p];
    // The known bits follow the hand: slot's bit goes, the higher ones shift down with their cards.
    // Nothing to do when no card is known, the common case outside uniform random play (measured:
    // a branch-free update was no faster in random playouts, where pile draws are most draws).
    const unsigned known = known_[p];
    if (known != 0) {
      const unsigned below = (1U << slot) - 1U;
      unsigned rest = (known & below) | ((known >> 1) & ~below);
      // An unknown wager left while a known identical one stays: the opponent cannot tell which
      // left, so it no longer knows one is still here (numeric cards are unique: no such case).
      if (((known >> slot) & 1U) == 0 && c.is_wager())
        for (unsigned m = rest; m != 0; m &= m - 1) {
          const int j = std::countr_zero(m);
          if (hand_[p][j] == c) {
            rest &= ~(1U << j);
            break;
          }
        }
      known_[p] = static_cast<std::uint16_t>(rest);
    }
    phase_ = Phase::kDraw;
  } else {
    const int base = rules_.draw_deck_action();
    Card c;
    if (action == base) {
      c = deck_[--deck_len_];
    } else {
      const int color = action - base - 1;
      if (color < 0 || color >= rules_.n_colors || pile_len_[color] == 0 || color == pending_color_) throw_illegal(action);
      c = pile_[color][--pile_len_[color]];
      if (pile_len_[color] == 0) nonempty_piles_ = static_cast<std::uint8_t>(nonempty_piles_ & ~(1U << color));
      --public_count_[color][c.rank()];
      known_[p] = static_cast<std::uint16_t>(known_[p] | (1U << hand_len_[p]));  // it was face up
    }
    hand_[p][hand_len_[p]++] = c;
    pending_color_ = kNoColor;
    ++turn_count_;
    phase_ = Phase::kCard;
    if (deck_len_ != 0) current_player_ = static_cast<std::uint8_t>(1 - p);
  }
  ++move_count_;
}

void State::check_invariants() const {
  const Rules& r = rules_;
  std::array<std::array<int, kMaxRanks + 1>, kMaxColors> counts{};
  std::array<std::array<int, kMaxRanks + 1>, kMaxColors> pub{};
  auto count = [&](Card c, const char* where) {
    CFR_CHECK(c.color() < r.n_colors && c.rank() <= r.n_ranks, "bad card byte {:#x} in {}", c.v, where);
    ++counts[c.color()][c.rank()];
  };
  for (int i = 0; i < deck_len_; ++i) count(deck_[i], "deck");
  for (int p = 0; p < 2; ++p)
    for (int i = 0; i < hand_len_[p]; ++i) count(hand_[p][i], "hand");
  for (int c = 0; c < r.n_colors; ++c)
    for (int i = 0; i < pile_len_[c]; ++i) {
      count(pile_[c][i], "pile");
      CFR_CHECK(pile_[c][i].color() == c, "pile {} holds a card of color {}", c, pile_[c][i].color());
      ++pub[c][pile_[c][i].rank()];
    }
  for (int p = 0; p < 2; ++p) {
    int total = 0;
    for (int c = 0; c < r.n_colors; ++c) {
      const Expedition& e = exp_[p][c];
      Expedition re{};
      for (int i = 0; i < e.len; ++i) {
        const Card k = exp_cards_[p][c][i];
        count(k, "expedition");
        ++pub[c][k.rank()];
        CFR_CHECK(k.color() == c, "expedition {} of player {} holds color {}", c, p, k.color());
        if (k.is_wager()) {
          CFR_CHECK(re.last_rank == 0, "wager after a numeric in expedition {} of player {}", c, p);
          ++re.wagers;
        } else {
          CFR_CHECK(k.rank() > re.last_rank, "ranks not increasing in expedition {} of player {}", c, p);
          re.last_rank = static_cast<std::uint8_t>(k.rank());
          re.face_sum = static_cast<std::int16_t>(re.face_sum + r.face(k.rank()));
        }
        ++re.len;
      }
      const int from_scratch = score_expedition(r, std::span<const Card>(exp_cards_[p][c].data(), e.len));
      CFR_CHECK(re.wagers == e.wagers && re.last_rank == e.last_rank && re.face_sum == e.face_sum,
                "expedition {} of player {} summary differs from its cards", c, p);
      CFR_CHECK(from_scratch == e.score, "expedition {} of player {}: score {} but recomputed {}", c, p, e.score, from_scratch);
      total += from_scratch;
    }
    CFR_CHECK(total == total_[p], "player {} total {} but recomputed {}", p, total_[p], total);
  }
  for (int c = 0; c < r.n_colors; ++c)
    CFR_CHECK(((nonempty_piles_ >> c) & 1U) == (pile_len_[c] != 0 ? 1U : 0U),
              "non-empty pile bit of color {} disagrees with pile size {}", c, pile_len_[c]);
  for (int c = 0; c < r.n_colors; ++c)
    for (int k = 0; k <= r.n_ranks; ++k) {
      const int expected = k == 0 ? r.n_handshakes : 1;
      CFR_CHECK(counts[c][k] == expected, "card (color {}, rank {}) occurs {} times, expected {}", c, k, counts[c][k], expected);
      CFR_CHECK(pub[c][k] == public_count_[c][k], "public count of (color {}, rank {}) is {}, recomputed {}", c, k,
                public_count_[c][k], pub[c][k]);
    }
  const int p = current_player_;
  const int expected_hand = phase_ == Phase::kCard ? r.hand_size : r.hand_size - 1;
  if (deck_len_ != 0) {
    CFR_CHECK(hand_len_[p] == expected_hand, "mover's hand holds {}, expected {}", hand_len_[p], expected_hand);
    CFR_CHECK(hand_len_[1 - p] == r.hand_size, "other hand holds {}, expected {}", hand_len_[1 - p], r.hand_size);
  }
  CFR_CHECK(phase_ == Phase::kDraw || pending_color_ == kNoColor, "pending color {} set outside the DRAW phase", pending_color_);
  for (int q = 0; q < 2; ++q) {
    CFR_CHECK((known_[q] >> hand_len_[q]) == 0, "player {} has known-card bits {:#x} beyond its {} hand cards", q, known_[q],
              hand_len_[q]);
    // Only pile draws make cards known, one per turn at most.
    CFR_CHECK(std::popcount(static_cast<unsigned>(known_[q])) <= turn_count_, "player {} has {} known cards after {} turns", q,
              std::popcount(static_cast<unsigned>(known_[q])), turn_count_);
  }
}

int State::known_count(int p, int color, int rank) const noexcept {
  const Card x = Card::make(color, rank);
  int n = 0;
  for (unsigned m = known_[p]; m != 0; m &= m - 1) n += hand_[p][std::countr_zero(m)] == x ? 1 : 0;
  return n;
}

// Known opponent cards are left out of the pool and keep their slots; the unknown slots, in slot
// order, then the deck take the shuffled pool. With none known, the pool, the Fisher–Yates shuffle
// and so the RNG draws are exactly those from before known cards were tracked.
void State::resample_hidden(int observer, Rng& rng) {
  const int o = 1 - observer;
  const unsigned known = known_[o];
  std::array<Card, kMaxDeck + kMaxHandSize> pool{};
  int n = 0;
  for (int i = 0; i < hand_len_[o]; ++i)
    if (((known >> i) & 1U) == 0) pool[n++] = hand_[o][i];
  for (int i = 0; i < deck_len_; ++i) pool[n++] = deck_[i];
  for (int i = n - 1; i > 0; --i) std::swap(pool[i], pool[rng.below(static_cast<std::uint32_t>(i + 1))]);
  int k = 0;
  for (int i = 0; i < hand_len_[o]; ++i)
    if (((known >> i) & 1U) == 0) hand_[o][i] = pool[k++];
  for (int i = 0; i < deck_len_; ++i) deck_[i] = pool[k++];
}

void State::set_unknown_hand(int p, std::span<const Card> cards) {
  const unsigned known = known_[p];
  const int slots = hand_len_[p] - std::popcount(known);
  if (static_cast<int>(cards.size()) != slots)
    throw CheckError(fmt::format("set_unknown_hand: {} cards for {} unknown slots of player {}", cards.size(), slots, p));
  // Per card byte: how many the new hand takes beyond what its unknown slots already hold. The
  // deck gives those up, and takes the old slots' surplus in their place.
  std::array<int, 256> need{};
  for (const Card c : cards) ++need[c.v];
  std::array<Card, kMaxHandSize> surplus{};
  int n_surplus = 0;
  for (int i = 0; i < hand_len_[p]; ++i)
    if (((known >> i) & 1U) == 0) {
      if (need[hand_[p][i].v] > 0)
        --need[hand_[p][i].v];
      else
        surplus[n_surplus++] = hand_[p][i];
    }
  int k = 0;
  for (int i = 0; i < deck_len_ && k < n_surplus; ++i)
    if (need[deck_[i].v] > 0) {
      --need[deck_[i].v];
      deck_[i] = surplus[k++];
    }
  if (k != n_surplus)
    throw CheckError(fmt::format("set_unknown_hand: player {}'s new cards are not among its unknown cards and the deck", p));
  int j = 0;
  for (int i = 0; i < hand_len_[p]; ++i)
    if (((known >> i) & 1U) == 0) hand_[p][i] = cards[static_cast<std::size_t>(j++)];
}

void State::permute_colors(std::span<const int> to) {
  const int C = rules_.n_colors;
  CFR_CHECK(static_cast<int>(to.size()) == C, "permute_colors: one new colour per colour");
  std::uint32_t seen = 0;
  for (const int d : to) {
    CFR_CHECK(d >= 0 && d < C && (seen & (1u << d)) == 0, "permute_colors: not a permutation of the colours");
    seen |= 1u << d;
  }
  const auto map = [&](Card c) { return Card::make(to[static_cast<std::size_t>(c.color())], c.rank()); };
  for (int i = 0; i < deck_len_; ++i) deck_[i] = map(deck_[i]);
  for (int p = 0; p < 2; ++p)
    for (int i = 0; i < hand_len_[p]; ++i) hand_[p][i] = map(hand_[p][i]);
  const auto pile = pile_;
  const auto pile_len = pile_len_;
  const auto exp_cards = exp_cards_;
  const auto exp = exp_;
  const auto counts = public_count_;
  nonempty_piles_ = 0;
  for (int c = 0; c < C; ++c) {
    const auto d = static_cast<std::size_t>(to[static_cast<std::size_t>(c)]);
    pile_len_[d] = pile_len[c];
    for (int i = 0; i < pile_len[c]; ++i) pile_[d][i] = map(pile[c][i]);
    if (pile_len[c] > 0) nonempty_piles_ |= static_cast<std::uint8_t>(1u << d);
    public_count_[d] = counts[c];
    for (int p = 0; p < 2; ++p) {
      exp_[p][d] = exp[p][c];
      for (int i = 0; i < exp[p][c].len; ++i) exp_cards_[p][d][i] = map(exp_cards[p][c][i]);
    }
  }
  if (pending_color_ != kNoColor) pending_color_ = static_cast<std::uint8_t>(to[pending_color_]);
}

bool operator==(const State& a, const State& b) {
  if (!(a.rules_ == b.rules_) || a.deck_len_ != b.deck_len_ || a.hand_len_ != b.hand_len_ ||
      a.current_player_ != b.current_player_ || a.phase_ != b.phase_ || a.pending_color_ != b.pending_color_ ||
      a.total_ != b.total_ || a.turn_count_ != b.turn_count_ || a.move_count_ != b.move_count_ || a.pile_len_ != b.pile_len_ ||
      a.known_ != b.known_)
    return false;
  for (int i = 0; i < a.deck_len_; ++i)
    if (a.deck_[i] != b.deck_[i]) return false;
  for (int p = 0; p < 2; ++p) {
    for (int i = 0; i < a.hand_len_[p]; ++i)
      if (a.hand_[p][i] != b.hand_[p][i]) return false;
    for (int c = 0; c < a.rules_.n_colors; ++c) {
      if (a.exp_[p][c].len != b.exp_[p][c].len) return false;
      for (int i = 0; i < a.exp_[p][c].len; ++i)
        if (a.exp_cards_[p][c][i] != b.exp_cards_[p][c][i]) return false;
    }
  }
  for (int c = 0; c < a.rules_.n_colors; ++c)
    for (int i = 0; i < a.pile_len_[c]; ++i)
      if (a.pile_[c][i] != b.pile_[c][i]) return false;
  return true;
}

std::string State::to_string() const {
  std::string s = fmt::format("move {} turn {} player {} phase {} deck {} pending {} totals {} {}\n", move_count_, turn_count_,
                              current_player_, phase_ == Phase::kCard ? "CARD" : "DRAW", deck_len_,
                              pending_color_ == kNoColor ? -1 : pending_color_, total_[0], total_[1]);
  for (int p = 0; p < 2; ++p) {
    s += fmt::format("  hand {}:", p);
    for (int i = 0; i < hand_len_[p]; ++i)
      s += fmt::format(" {}{}", card_name(rules_, hand_[p][i]), hand_card_known(p, i) ? "*" : "");
    s += "\n";
    for (int c = 0; c < rules_.n_colors; ++c) {
      if (exp_[p][c].len == 0) continue;
      s += fmt::format("  exp {} color {} (score {}):", p, c, exp_[p][c].score);
      for (int i = 0; i < exp_[p][c].len; ++i) s += fmt::format(" {}", card_name(rules_, exp_cards_[p][c][i]));
      s += "\n";
    }
  }
  for (int c = 0; c < rules_.n_colors; ++c) {
    if (pile_len_[c] == 0) continue;
    s += fmt::format("  pile {}:", c);
    for (int i = 0; i < pile_len_[c]; ++i) s += fmt::format(" {}", card_name(rules_, pile_[c][i]));
    s += "\n";
  }
  return s;
}

}  // namespace cfr::lc
