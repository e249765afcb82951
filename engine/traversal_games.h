#pragma once
// Game adapters for the traversals of engine/traversal.h.
//
// LostCitiesTraversalGame: a fresh deal from the traversal's RNG; the only chance during play is
// the deck order — when an action draws from the deck with at least 2 cards left, a uniformly
// random remaining card is first swapped to the top (deep-cfr.md §2.5). Optionally a fixed bot
// for opponent_policy = bot (the built-in bots keep no mutable state, so one may serve every
// thread).
//
// SmallTraversalGame<S>: Kuhn or Leduc; chance nodes are sampled from their outcome
// probabilities as soon as they are reached.
#include <memory>

#include "engine/bots.h"
#include "engine/game.h"
#include "engine/lost_cities.h"
#include "engine/rng.h"

namespace cfr {

struct LostCitiesTraversalGame {
  using State = lc::State;
  lc::Rules rules{};
  lc::EncodingOptions encoding{};
  std::shared_ptr<lc::Bot> bot;  // for opponent_policy = bot

  int num_actions() const noexcept { return rules.action_size(); }
  int input_width() const { return lc::encoding_size(rules, encoding); }
  State new_game(Rng& rng) const { return State::deal(rules, rng()); }
  void encode(const State& s, int player, float* out) const {
    s.encode(player, std::span<float>(out, static_cast<std::size_t>(input_width())), encoding);
  }
  void apply(State& s, int action, Rng& rng) const {
    if (action == rules.draw_deck_action() && s.phase() == lc::Phase::kDraw && s.deck_size() >= 2) {
      const int n = s.deck_size();
      s.swap_deck_cards(static_cast<int>(rng.below(static_cast<std::uint32_t>(n))), n - 1);
    }
    s.apply_action(action);
  }
  int bot_action(const State& s, Rng& rng) const {
    CFR_CHECK(bot != nullptr, "opponent_policy = bot without a bot");
    return bot->choose_action(s, rng);
  }
};

template <EnumerableGame S>
struct SmallTraversalGame {
  using State = S;

  int num_actions() const { return S::initial().num_distinct_actions(); }
  int input_width() const { return S::initial().info_state_size(); }
  State new_game(Rng& rng) const {
    State s = S::initial();
    resolve_chance(s, rng);
    return s;
  }
  void encode(const State& s, int player, float* out) const {
    s.encode_info_state(player, std::span<float>(out, static_cast<std::size_t>(input_width())));
  }
  void apply(State& s, int action, Rng& rng) const {
    s.apply_action(action);
    resolve_chance(s, rng);
  }
  static void resolve_chance(State& s, Rng& rng) {
    while (s.is_chance_node()) {
      ChanceOutcome out[kMaxChanceOutcomes];
      const int k = s.chance_outcomes(out);
      s.apply_action(pick_chance_outcome(std::span<const ChanceOutcome>(out, static_cast<std::size_t>(k)), rng.uniform()));
    }
  }
};

}  // namespace cfr
