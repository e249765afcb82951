#pragma once
// The game registry: games selected by name ("lost_cities", "kuhn", "leduc").
//
// Games are C++ types (the GameState concept), so the registry dispatches a name to a template:
//   visit_game(name, [&]<class S>(std::type_identity<S>) { ... use S ... });
// Enumerable games (EnumerableGame) also build their full GameTree by name.
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <fmt/format.h>

#include "engine/errors.h"
#include "engine/game_tree.h"
#include "engine/kuhn.h"
#include "engine/leduc.h"
#include "engine/lost_cities.h"

namespace cfr {

inline std::vector<std::string> game_names() { return {"lost_cities", "kuhn", "leduc"}; }
inline std::vector<std::string> enumerable_game_names() { return {"kuhn", "leduc"}; }

/// Calls f(std::type_identity<State>{}) for the named game; throws InputError naming the valid
/// games for any other name.
template <class F>
decltype(auto) visit_game(std::string_view name, F&& f) {
  if (name == "lost_cities") return f(std::type_identity<lc::State>{});
  if (name == "kuhn") return f(std::type_identity<kuhn::State>{});
  if (name == "leduc") return f(std::type_identity<leduc::State>{});
  throw InputError(fmt::format("unknown game '{}'; valid games: {}", name, join_names(game_names())));
}

/// The full tree of an enumerable game. Throws InputError for unknown or non-enumerable games.
inline GameTree build_game_tree(std::string_view name) {
  if (name == "kuhn") return GameTree::build<kuhn::State>("kuhn");
  if (name == "leduc") return GameTree::build<leduc::State>("leduc");
  if (name == "lost_cities")
    throw InputError("game 'lost_cities' is too large to enumerate; exact solvers and best responses take: " +
                     join_names(enumerable_game_names()));
  throw InputError(fmt::format("unknown game '{}'; valid games: {}", name, join_names(game_names())));
}

}  // namespace cfr
