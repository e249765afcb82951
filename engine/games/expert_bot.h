#pragma once
// heuristic_expert: a card-counting rule bot that plays as a careful club player does
// (docs/lost-cities.md, "heuristic_expert"). Every decision compares the actions by an estimated
// loss in points: what a discard gives up (the card's value to me, plus what it gives the
// opponent), what a play forecloses (the cards it skips), what opening an expedition is expected
// to score, and, in the draw phase, whether shortening or prolonging the game pays.
//
// What it sees: its own hand, both sides' expeditions, every discard pile, the deck's size, and
// the opponent's hand cards it knows (taken from a discard pile and not played since:
// State::hand_card_known). It never reads the opponent's other cards or the deck order. It keeps
// no memory between decisions: deterministic, stateless, safe on any number of threads.
#include <memory>
#include <string>
#include <string_view>

#include "engine/games/bots.h"

namespace cfr::lc {

/// Weights of heuristic_expert (points unless said otherwise). The defaults are the shipped bot.
struct ExpertParams {
  double future_factor = 0.8;  // weight of the expected value of cards still to be drawn
  double open_margin = 4.0;    // an expedition opens only when its projected score exceeds this
  double open_extra = 4.0;     // ... plus this per expedition already open beyond free_opens
  int free_opens = 2;
  double wager_margin = 6.0;       // a wager needs (projected sum − 20) ≥ this per multiplier
  double wager_deck_ratio = 0.45;  // ... and the deck above this share of all cards
  int wager_min_cards = 2;         // ... and this many numerics of its colour in hand
  double tempo = 2.0;              // bonus for playing a card now rather than later
  double scarce_tempo = 4.0;       // extra bonus when turns are short for the cards to play
  double dead_bonus = 0.5;         // preference for discarding a card dead for both sides
  double gift_open = 1.0;          // a discard the opponent can play on an open expedition: face·mult·this
  double gift_open_flat = 6.0;     // ... plus this
  double gift_closed = 0.25;       // a discard the opponent could use to open: face·this
  double gift_known = 1.5;         // ... plus this per card of that colour known in the opponent's hand
  double option_value = 0.15;      // value of a card of an unopened colour: face·this (early game)
  double deny = 0.5;               // weight of keeping a pile top from the opponent
  double hold_cost = 2.0;          // cost of taking a card I cannot use
  double deck_speculative = 0.5;   // weight of an unopened colour's cards in the deck draw's value
  double late_ratio = 0.35;        // the end game: deck below this share of all cards
  double run_weight = 4.0;         // end game: deck-draw bonus when ahead (pile-draw malus)
  double prolong_weight = 4.0;     // end game: pile-draw bonus when behind with cards to play
};

/// The bot; its name is heuristic_expert (registered in make_bot and bot_names), or `name` when given
/// (a variant's spec, so that reports tell variants apart).
std::unique_ptr<Bot> make_expert_bot(const Rules& rules, const ExpertParams& params = {}, std::string name = {});

/// A variant's spec: "heuristic_expert?key=value&key=value", the keys ExpertParams' fields
/// (open_margin, free_opens, deny, ...), the rest at their defaults. `query` is the part after the
/// '?'. Throws InputError naming the key and its allowed range for an unknown key, a repeated key,
/// a value that is not a number (an integer for free_opens and wager_min_cards) or out of range.
ExpertParams parse_expert_params(std::string_view query);

/// The prefix of a variant's spec: "heuristic_expert?".
inline constexpr std::string_view kExpertVariantPrefix = "heuristic_expert?";

}  // namespace cfr::lc
