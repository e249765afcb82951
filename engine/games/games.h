#pragma once
// The game registry: every game registers once, here, with its state type (the GameState
// concept, engine/core/game.h), its traversal adapter (TraversalAdapter, engine/traversal/traversal_games.h)
// and, through the concepts, whether it is enumerable (EnumerableGame: exact trees, best
// responses, tabular solvers, exact exploitability as its evaluation; otherwise the game's own
// evaluation, e.g. Lost Cities' matches against bots). Config choices, cfr-run's training, tree
// building, cfr-eval and checkpoints read the registration by name:
//   visit_registered_game(name, [&]<class R>(R) { ... R::State, R::Adapter, R::kEnumerable ... });
// An unknown name is an InputError listing the registered games. Adding a game:
// docs/adding-a-game.md.
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "engine/core/errors.h"
#include "engine/games/kuhn.h"
#include "engine/games/leduc.h"
#include "engine/games/lost_cities.h"
#include "engine/tabular/game_tree.h"
#include "engine/traversal/traversal_games.h"

namespace cfr {

/// One game: its state type and traversal adapter (both checked here, at compile time).
template <GameState S, TraversalAdapter A>
requires std::same_as<typename A::State, S>
struct GameRegistration {
  using State = S;
  using Adapter = A;
  static constexpr std::string_view kName = S::kName;
  static constexpr bool kEnumerable = EnumerableGame<S>;
};

template <class... Registrations>
struct GameList {};

/// The games of the engine.
using BuiltinGames =
    GameList<GameRegistration<lc::State, LostCitiesTraversalGame>, GameRegistration<kuhn::State, SmallTraversalGame<kuhn::State>>,
             GameRegistration<leduc::State, SmallTraversalGame<leduc::State>>>;

/// A registry with more games: `ExtendedGames<BuiltinGames, GameRegistration<MyState, MyAdapter>>`
/// (the tests register a game of their own this way; docs/adding-a-game.md).
template <class List, class... More>
struct ExtendGames;
template <class... R, class... More>
struct ExtendGames<GameList<R...>, More...> {
  using type = GameList<R..., More...>;
};
template <class List, class... More>
using ExtendedGames = typename ExtendGames<List, More...>::type;

namespace detail {
template <class F, class R, class... Rest>
decltype(auto) visit_in(std::string_view name, F& f, const std::vector<std::string>& names, GameList<R, Rest...>) {
  if (name == R::kName) return f(R{});
  if constexpr (sizeof...(Rest) > 0) {
    return visit_in(name, f, names, GameList<Rest...>{});
  } else {
    throw InputError(fmt::format("unknown game '{}'; valid games: {}", name, join_names(names)));
  }
}
template <class... R>
std::vector<std::string> names_of(GameList<R...>, bool enumerable_only) {
  std::vector<std::string> out;
  (..., (!enumerable_only || R::kEnumerable ? (void)out.emplace_back(R::kName) : void()));
  return out;
}
}  // namespace detail

/// The registered games' names, in registration order.
template <class List = BuiltinGames>
std::vector<std::string> game_names() {
  return detail::names_of(List{}, false);
}
/// The names of those that are enumerable.
template <class List = BuiltinGames>
std::vector<std::string> enumerable_game_names() {
  return detail::names_of(List{}, true);
}

/// Whether the named game is enumerable (InputError for an unknown name).
template <class List = BuiltinGames>
bool is_enumerable(std::string_view name);

/// Calls f(R{}) with the registration R of the named game; InputError naming the registered
/// games for any other name.
template <class List = BuiltinGames, class F>
decltype(auto) visit_registered_game(std::string_view name, F&& f) {
  return detail::visit_in(name, f, game_names<List>(), List{});
}

template <class List>
bool is_enumerable(std::string_view name) {
  return visit_registered_game<List>(name, []<class R>(R) { return R::kEnumerable; });
}

/// Calls f(std::type_identity<State>{}) for the named game's state type.
template <class List = BuiltinGames, class F>
decltype(auto) visit_game(std::string_view name, F&& f) {
  return visit_registered_game<List>(name, [&]<class R>(R) { return f(std::type_identity<typename R::State>{}); });
}

/// The full tree of an enumerable game. Throws InputError for unknown or non-enumerable games.
template <class List = BuiltinGames>
GameTree build_game_tree(std::string_view name) {
  return visit_registered_game<List>(name, [&]<class R>(R) -> GameTree {
    if constexpr (R::kEnumerable) {
      return GameTree::build<typename R::State>(std::string(R::kName));
    } else {
      throw InputError(fmt::format("game '{}' is too large to enumerate; exact solvers and best responses take: {}", name,
                                   join_names(enumerable_game_names<List>())));
    }
  });
}

/// The network input width and action count of the named game's traversals under `settings`.
template <class List = BuiltinGames>
std::pair<int, int> traversal_widths(std::string_view name, const GameSettings& settings) {
  return visit_registered_game<List>(name, [&]<class R>(R) {
    const auto game = R::Adapter::from_settings(settings);
    return std::pair<int, int>{game.input_width(), game.num_actions()};
  });
}

/// The width of the named game's deck-order encoding under `settings` (the adapter's world_width(),
/// read by MMD's value network with mmd.value_input = "world"), or 0 for a game without one.
template <class List = BuiltinGames>
int traversal_world_width(std::string_view name, const GameSettings& settings) {
  return visit_registered_game<List>(name, [&]<class R>(R) { return world_width_of(R::Adapter::from_settings(settings)); });
}

}  // namespace cfr
