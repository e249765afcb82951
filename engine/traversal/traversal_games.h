#pragma once
// Game adapters for the traversals of engine/traversal/traversal.h.
//
// LostCitiesTraversalGame: a fresh deal from the traversal's RNG; the only chance during play is
// the deck order — when an action draws from the deck with at least 2 cards left, a uniformly
// random remaining card is first swapped to the top (deep-cfr.md §2.5). Optionally a fixed bot
// for opponent_policy = bot (the built-in bots keep no mutable state, so one may serve every
// thread).
//
// SmallTraversalGame<S>: Kuhn or Leduc; chance nodes are sampled from their outcome
// probabilities as soon as they are reached.
//
// Every adapter satisfies TraversalAdapter (checked where a game registers, engine/games/games.h) and
// is made from the game settings a config gives (from_settings).
#include <concepts>
#include <memory>
#include <string>
#include <vector>

#include "engine/core/game.h"
#include "engine/core/rng.h"
#include "engine/games/bots.h"
#include "engine/games/lost_cities.h"

namespace cfr {

/// What a config sets for a game's traversals: the Lost Cities rules, encoding and the bot of
/// opponent_policy = bot (empty: none). Games that have no such settings ignore them.
struct GameSettings {
  lc::Rules rules{};
  lc::EncodingOptions encoding{};
  std::string opponent_bot;
  std::vector<std::string> league_bots;  // MMD's league bots (mmd.opponents), by index
};

/// A game as the traversals see it (engine/traversal/traversal.h): its state type, the network's input
/// width and action count, a new game from an RNG stream, the observer's encoding, and how an
/// action is applied (with the game's chance resolved from the same stream).
template <class A>
concept TraversalAdapter = GameState<typename A::State> && std::copyable<A> &&
    requires(const A& a, typename A::State& s, int p, int action, float* out, Rng& rng, const GameSettings& settings) {
  { A::from_settings(settings) } -> std::same_as<A>;
  { a.num_actions() } -> std::convertible_to<int>;
  { a.input_width() } -> std::convertible_to<int>;
  { a.new_game(rng) } -> std::same_as<typename A::State>;
  a.encode(s, p, out);
  a.apply(s, action, rng);
};

/// An adapter whose chance is a deck dealt in order may show a critic that order (MMD's
/// mmd.value_input = "world", engine/traversal/mmd.h): world_width() floats of encode_world(s, p,
/// out), and apply_dealt(s, a), an action that draws the deck's own next card (lost_cities).
template <class A>
inline constexpr bool kGameHasWorld = requires(const A& a, typename A::State& st, float* out) {
  { a.world_width() } -> std::convertible_to<int>;
  a.encode_world(st, 0, out);
  a.apply_dealt(st, 0);
};
/// Its world_width(), or 0 for an adapter without one.
template <class A>
int world_width_of(const A& a) {
  if constexpr (kGameHasWorld<A>) {
    return a.world_width();
  } else {
    return 0;
  }
}

struct LostCitiesTraversalGame {
  using State = lc::State;
  static LostCitiesTraversalGame from_settings(const GameSettings& g) {
    LostCitiesTraversalGame game{
        .rules = g.rules,
        .encoding = g.encoding,
        .bot = g.opponent_bot.empty() ? nullptr : std::shared_ptr<lc::Bot>(lc::make_bot(g.opponent_bot, g.rules)),
        .league_bots = {}};
    for (const auto& name : g.league_bots) game.league_bots.push_back(std::shared_ptr<lc::Bot>(lc::make_bot(name, g.rules)));
    return game;
  }
  lc::Rules rules{};
  lc::EncodingOptions encoding{};
  std::shared_ptr<lc::Bot> bot;                       // for opponent_policy = bot
  std::vector<std::shared_ptr<lc::Bot>> league_bots;  // MMD's league bots (GameSettings::league_bots)

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
  /// The deck's order for a critic that may read it (mmd.value_input = "world", engine/traversal/mmd.h).
  int world_width() const { return lc::world_encoding_size(rules); }
  void encode_world(const State& s, int player, float* out) const {
    s.encode_world(player, std::span<float>(out, static_cast<std::size_t>(world_width())));
  }
  /// An action that draws the deck's own next card (no random card is moved to the top first): the
  /// deal shuffled the deck uniformly, so a single line of play is distributed as under apply.
  void apply_dealt(State& s, int action) const { s.apply_action(action); }
  int bot_action(const State& s, Rng& rng) const {
    CFR_CHECK(bot != nullptr, "opponent_policy = bot without a bot");
    return bot->choose_action(s, rng);
  }
  int league_bot_action(const State& s, Rng& rng, int which) const {
    CFR_CHECK(which >= 0 && which < static_cast<int>(league_bots.size()), "no such league bot");
    return league_bots[static_cast<std::size_t>(which)]->choose_action(s, rng);
  }
};

template <EnumerableGame S>
struct SmallTraversalGame {
  using State = S;
  static SmallTraversalGame from_settings(const GameSettings&) { return {}; }

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
