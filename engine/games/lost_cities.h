#pragma once
// Lost Cities, two players, exactly as the reference system plays it
// (shared/reference/lost-cities.md §1; docs/lost-cities.md for the card and action ids).
//
// Card ids (public, as in the golden data): id = color·(n_ranks+1) + rank, rank 0 = wager
// ("handshake", face 0), rank r ≥ 1 has face min_rank + r − 1. Internally a card is one byte
// (color << 4 | rank) so that color and rank need no division.
//
// Unified action ids (hand_size H, n_colors C): CARD phase: 2i = play hand slot i, 2i+1 =
// discard hand slot i; DRAW phase: 2H = draw from the deck, 2H+1+c = take the top of discard
// pile c. 2H+1+C ids in all (22 with the default rules).
//
// Hands are unsorted: slots are in deal order; playing or discarding slot i shifts later slots
// left; a drawn card goes to the end. The deck's top is its last element. The game ends as soon
// as the deck is empty after a draw (a state whose deck is empty is terminal).
//
// Known cards: a card taken from a discard pile was face up, so the other player knows it is in
// the taker's hand until it is played or discarded. The state marks those hand slots
// (hand_card_known); resample_hidden keeps them, and the encoder can show them to the other
// player (EncodingOptions::opponent_known_cards).
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/core/game.h"
#include "engine/core/rng.h"

namespace cfr::lc {

inline constexpr int kMaxColors = 8;
inline constexpr int kMaxRanks = 12;
inline constexpr int kMaxHandshakes = 4;
inline constexpr int kMaxHandSize = 12;
inline constexpr int kMaxPerColor = kMaxRanks + kMaxHandshakes;
inline constexpr int kMaxDeck = kMaxColors * kMaxPerColor;
static_assert((kMaxPerColor & (kMaxPerColor - 1)) == 0, "the encoder masks pile indices with kMaxPerColor - 1");
inline constexpr int kMaxActions = 2 * kMaxHandSize + 1 + kMaxColors;
static_assert(kMaxActions <= kMaxActionsAnyGame);
static_assert(kMaxColors <= 8, "nonempty_piles_ is one byte");
static_assert(kMaxHandSize <= 16, "known_ holds one bit per hand slot in 16 bits");

/// The rule knobs of lost-cities.md §1 (defaults = the standard game).
struct Rules {
  int n_colors = 5;
  int n_ranks = 9;
  int min_rank = 2;
  int n_handshakes = 3;
  int hand_size = 8;
  int expedition_penalty = -20;
  int bonus_threshold = 8;
  int bonus_amount = 20;

  /// Throws InputError naming the first invalid knob, its value and the allowed range.
  void validate() const;

  int cards_per_color() const noexcept { return n_ranks + n_handshakes; }
  int deck_size() const noexcept { return n_colors * cards_per_color(); }
  int action_size() const noexcept { return 2 * hand_size + 1 + n_colors; }
  int draw_deck_action() const noexcept { return 2 * hand_size; }
  int pile_action(int color) const noexcept { return 2 * hand_size + 1 + color; }
  /// Face value of a rank: 0 for a wager, min_rank + rank − 1 otherwise.
  int face(int rank) const noexcept { return rank == 0 ? 0 : min_rank + rank - 1; }
  /// Face sum of one color's numeric cards.
  int color_face_sum() const noexcept { return n_ranks * min_rank + n_ranks * (n_ranks - 1) / 2; }

  friend bool operator==(const Rules&, const Rules&) = default;
};

/// One card as a byte: color in the high nibble, rank in the low nibble.
struct Card {
  std::uint8_t v = 0;
  static constexpr Card make(int color, int rank) noexcept { return Card{static_cast<std::uint8_t>((color << 4) | rank)}; }
  constexpr int color() const noexcept { return v >> 4; }
  constexpr int rank() const noexcept { return v & 15; }
  constexpr bool is_wager() const noexcept { return (v & 15) == 0; }
  friend constexpr bool operator==(Card, Card) = default;
};

/// Public card id (golden-data scheme) of a card, and back. card_from_id throws InputError for
/// an id outside [0, n_colors·(n_ranks+1)).
int card_id(const Rules& r, Card c) noexcept;
Card card_from_id(const Rules& r, int id);
std::string card_name(const Rules& r, Card c);  // e.g. "c2:W" (wager) or "c0:7" (face 7)

enum class Phase : std::uint8_t { kCard = 0, kDraw = 1 };

/// What the encoder includes (lost-cities.md §2; docs/lost-cities.md for opponent_known_cards).
struct EncodingOptions {
  bool derived_playability = true;
  bool slot_aware_playability = true;
  /// Ours, not the reference's (off by default, so every existing size and model is unchanged):
  /// n_colors·(n_ranks+1) floats after every other block, the number of the opponent's hand cards
  /// of each (color, rank) that the observer knows (taken from a discard pile, not played since).
  bool opponent_known_cards = false;
  /// Ours, off by default: hand_size·(n_colors + n_ranks + 5) floats after opponent_known_cards,
  /// per hand slot its card's color and rank one-hot and both players' expedition of that color
  /// (length, last rank), from the observer's seat first; zeros for an empty slot. The card
  /// actions name slots, and the reference blocks give a slot's card as two scalars only.
  bool slot_cards = false;
  friend bool operator==(const EncodingOptions&, const EncodingOptions&) = default;
};

/// The encoding's blocks in order: the reference's fixed block, then one per EncodingOptions
/// flag. `size` is the block's floats under `r`; `on` whether the options include it.
struct EncodingBlock {
  std::string_view name;  // "base" or the flag's config key (encoding.NAME)
  int size = 0;
  bool on = false;
};
inline constexpr int kEncodingBlocks = 5;
/// Inline, with encoding_size: the traversal asks for the size at every node.
inline std::array<EncodingBlock, kEncodingBlocks> encoding_blocks(const Rules& r, const EncodingOptions& o) {
  const int C = r.n_colors, H = r.hand_size, R = r.n_ranks;
  return {{{"base", 5 + 3 * H + 2 * C * 4 + C * 4 + C * (R + 1) + 3 + 1 + (C + 1) + r.action_size(), true},
           {"derived_playability", C * 15 + 3, o.derived_playability},
           {"slot_aware_playability", H * 6, o.slot_aware_playability},
           {"opponent_known_cards", C * (R + 1), o.opponent_known_cards},
           {"slot_cards", H * (C + R + 5), o.slot_cards}}};
}

/// For an encoding `to` that holds every block of `from` (the same rules) and possibly more:
/// for each of `to`'s floats, the index of the same float in `from`'s encoding, or -1 for a float
/// of a block `from` lacks. Empty when `from` has a block that `to` lacks. A network trained on
/// `from` reads `to` unchanged when its first layer is widened with zero weights at the -1 columns.
std::vector<int> encoding_column_map(const Rules& r, const EncodingOptions& from, const EncodingOptions& to);

/// Score of one expedition from its cards in play order: 0 when empty, else (face sum +
/// expedition_penalty)·(wagers + 1), plus bonus_amount when it holds ≥ bonus_threshold cards.
int score_expedition(const Rules& r, std::span<const Card> cards) noexcept;

/// Number of floats of the encoding: 171 / 249 / 219 / 297 with the default rules (+ 50 with
/// opponent_known_cards, + 152 with slot_cards).
inline int encoding_size(const Rules& r, const EncodingOptions& o) {
  int n = 0;
  for (const EncodingBlock& b : encoding_blocks(r, o)) n += b.on ? b.size : 0;
  return n;
}

/// Floats of State::encode_world: three per card id (n_colors·(n_ranks+1)), then the deck's size.
inline int world_encoding_size(const Rules& r) { return 3 * r.n_colors * (r.n_ranks + 1) + 1; }

/// Per (player, color) expedition summary, maintained incrementally.
struct Expedition {
  std::uint8_t len = 0;        // cards, wagers included
  std::uint8_t wagers = 0;     // wager cards
  std::uint8_t last_rank = 0;  // highest (= last) numeric rank, 0 if none
  std::int16_t face_sum = 0;   // sum of numeric faces
  std::int16_t score = 0;      // this expedition's score
};

class State {
 public:
  static constexpr std::uint8_t kNoColor = 0xff;
  static constexpr std::string_view kName = "lost_cities";

  /// Deals a game: the full deck shuffled (Fisher–Yates with Rng(seed)), then dealt.
  static State deal(const Rules& rules, std::uint64_t seed);
  /// Deals from a given deck before dealing (public card ids, top = last element). Throws
  /// InputError when the deck is not exactly the rules' multiset of cards.
  static State from_deck(const Rules& rules, std::span<const int> deck_ids);
  /// The deck deal(rules, seed) deals, as public card ids before dealing (top = last): what a
  /// transcript records. Writes rules.deck_size() ids into out and returns that count.
  static int shuffled_deck(const Rules& rules, std::uint64_t seed, std::span<int, kMaxDeck> out);

  // --- game concept -------------------------------------------------------------------------
  int current_player() const noexcept { return current_player_; }
  bool is_terminal() const noexcept { return deck_len_ == 0; }
  ActionMask legal_mask() const noexcept;
  int num_distinct_actions() const noexcept { return rules_.action_size(); }
  /// Score difference total(p) − total(1−p), at any state (the reference's cut-off value too).
  double returns(int p) const noexcept { return total_[p] - total_[1 - p]; }
  int info_state_size() const noexcept { return encoding_size(rules_, EncodingOptions{}); }
  /// Encodes with both encoding flags on.
  void encode_info_state(int observer, std::span<float> out) const { encode(observer, out, EncodingOptions{}); }
  /// Applies a legal action; throws IllegalActionError (naming the action, phase and player)
  /// for any other.
  void apply_action(int action);
  /// Recomputes scores, card conservation, hand sizes and the public histogram from scratch and
  /// throws CheckError on any disagreement with the incremental state.
  void check_invariants() const;

  // --- encoding -----------------------------------------------------------------------------
  /// Writes encoding_size(rules, opts) floats into out (precondition checked: out is at least
  /// that long) from `observer`'s view: own hand, public cards, counts; never the opponent's
  /// hand or the deck order.
  void encode(int observer, std::span<float> out, const EncodingOptions& opts) const;
  /// The deck's order, which no player sees, for a critic that may read it (mmd.value_input =
  /// "world"), from `observer`'s seat: per card id, its copies in the deck the observer would draw
  /// if every draw came from the deck (the next draw is the player to move's), those the opponent
  /// would, and the sum over its copies of 1 − depth/size (how soon each comes up; the top is 1);
  /// then size / rules.deck_size(). world_encoding_size(rules) floats (precondition checked).
  void encode_world(int observer, std::span<float> out) const;

  // --- observers ----------------------------------------------------------------------------
  const Rules& rules() const noexcept { return rules_; }
  Phase phase() const noexcept { return phase_; }
  int deck_size() const noexcept { return deck_len_; }
  Card deck_card(int i) const noexcept { return deck_[i]; }  // i = deck_size()−1 is the top
  int hand_size(int p) const noexcept { return hand_len_[p]; }
  Card hand_card(int p, int slot) const noexcept { return hand_[p][slot]; }
  /// Whether player p's opponent knows the card in p's hand slot: p took it from a discard pile
  /// (face up) and has not played or discarded it since. A deck draw or the deal is never known.
  /// Wagers of one color are interchangeable, so when p plays or discards an unknown wager while
  /// a known identical one stays in hand, the known mark goes (the opponent saw a wager of that
  /// color leave and cannot tell which): knowledge depends only on what the opponent saw.
  bool hand_card_known(int p, int slot) const noexcept { return ((known_[p] >> slot) & 1U) != 0; }
  /// Bit i set iff hand_card_known(p, i); no bit at or above hand_size(p).
  std::uint32_t known_mask(int p) const noexcept { return known_[p]; }
  /// Number of p's hand cards of (color, rank) that p's opponent knows.
  int known_count(int p, int color, int rank) const noexcept;
  const Expedition& expedition(int p, int color) const noexcept { return exp_[p][color]; }
  int expedition_card_count(int p, int color) const noexcept { return exp_[p][color].len; }
  Card expedition_card(int p, int color, int i) const noexcept { return exp_cards_[p][color][i]; }
  int pile_size(int color) const noexcept { return pile_len_[color]; }
  Card pile_card(int color, int i) const noexcept { return pile_[color][i]; }
  Card pile_top(int color) const noexcept { return pile_[color][pile_len_[color] - 1]; }
  /// Color discarded this turn (not drawable in the DRAW phase), or kNoColor.
  int pending_color() const noexcept { return pending_color_; }
  int total(int p) const noexcept { return total_[p]; }
  int turn_count() const noexcept { return turn_count_; }
  int move_count() const noexcept { return move_count_; }
  /// Count of (color, rank) cards visible in both expeditions and all piles.
  int public_count(int color, int rank) const noexcept { return public_count_[color][rank]; }
  /// Whether player p may play card c now (wager: no numeric yet; numeric: rank above last).
  bool playable(int p, Card c) const noexcept {
    const int last = exp_[p][c.color()].last_rank;
    return c.is_wager() ? last == 0 : c.rank() > last;
  }

  /// Swaps deck cards i and j (positions from the bottom; deck_size()−1 is the top). Traversals use
  /// it to randomise the card a draw will take. Precondition: both < deck_size().
  void swap_deck_cards(int i, int j) noexcept { std::swap(deck_[i], deck_[j]); }

  /// Redistributes the cards `observer` cannot see (the opponent's unknown hand cards and the
  /// deck) uniformly at random, keeping their counts: a state of the same information set for
  /// `observer`. The opponent's known cards (hand_card_known) stay in their slots. With no known
  /// opponent card it shuffles and consumes `rng` exactly as before known cards were tracked.
  void resample_hidden(int observer, Rng& rng);

  /// Writes `cards` into player p's unknown hand slots (those not hand_card_known), in slot order,
  /// and puts the cards they held into the deck positions the new ones came from, so every card
  /// is kept: another state of the same information set for p's opponent (the search's belief,
  /// engine/games/opponent_turns.h). Throws CheckError unless `cards` has exactly as many cards as
  /// p has unknown slots and is a sub-multiset of those slots' cards and the deck's.
  void set_unknown_hand(int p, std::span<const Card> cards);

  /// Relabels the colours: every card of colour c becomes colour to[c] (hands, deck, piles,
  /// expeditions), with the per-colour piles, expeditions and counts moved to their new colour and
  /// the pending discarded colour renamed. The rules treat every colour alike, so this is the same
  /// game position under another naming: scores, legality up to the renamed draw actions (pile c's
  /// draw becomes pile to[c]'s) and every card action (action ids name hand slots) are unchanged.
  /// Throws CheckError unless `to` is a permutation of 0..n_colors−1.
  void permute_colors(std::span<const int> to);

  /// Debug text of the whole state (both hands, a known card marked '*', deck size, expeditions,
  /// piles, totals).
  std::string to_string() const;

  friend bool operator==(const State&, const State&);

 private:
  State() = default;
  static int score_of(const Rules& r, const Expedition& e) noexcept;
  static void encode_into(const State& s, int observer, float* __restrict out, const EncodingOptions& opts) noexcept;
  [[noreturn]] void throw_illegal(int action) const;

  Rules rules_{};
  std::array<Card, kMaxDeck> deck_{};
  std::array<std::array<Card, kMaxHandSize>, 2> hand_{};
  std::array<std::array<Card, kMaxPerColor>, kMaxColors> pile_{};
  std::array<std::array<std::array<Card, kMaxPerColor>, kMaxColors>, 2> exp_cards_{};
  std::array<std::array<Expedition, kMaxColors>, 2> exp_{};
  std::array<std::array<std::uint8_t, kMaxRanks + 1>, kMaxColors> public_count_{};
  std::array<std::uint8_t, kMaxColors> pile_len_{};
  std::uint8_t nonempty_piles_ = 0;  // bit c set iff pile c is non-empty
  std::array<std::uint8_t, 2> hand_len_{};
  std::array<std::uint16_t, 2> known_{};  // bit i of known_[p]: hand_card_known(p, i)
  std::array<int, 2> total_{};
  int turn_count_ = 0;
  int move_count_ = 0;
  std::uint8_t deck_len_ = 0;
  std::uint8_t current_player_ = 0;
  Phase phase_ = Phase::kCard;
  std::uint8_t pending_color_ = kNoColor;
};

static_assert(GameState<State>);

}  // namespace cfr::lc
