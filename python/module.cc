// The `cfr` Python module (pybind11): the engine's games with OpenSpiel's vocabulary and a
// vectorised environment (docs/python.md). Everything here is binding code: the games' behaviour
// is states.h/.cc over the engine, the batched stepping vector_env.h/.cc.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <unistd.h>

#include <array>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "engine/core/errors.h"
#include "engine/core/resources.h"
#include "engine/games/bots.h"
#include "engine/games/games.h"
#include "engine/games/match.h"
#include "engine/games/players.h"
#include "engine/tabular/best_response.h"
#include "engine/tabular/tabular_cfr.h"
#include "python/evaluator.h"
#include "python/players.h"
#include "python/states.h"
#include "python/train.h"
#include "python/traverse.h"
#include "python/vector_env.h"

namespace pb = pybind11;

namespace cfr::py_module {

using cfr::py::AnyState;
using cfr::py::Game;
using cfr::py::StepBuffers;
using cfr::py::VectorEnv;
using cfr::py::VectorEnvOptions;

constexpr int kChance = -1;
constexpr int kTerminal = -4;

/// A Python-side state: the engine state and the game it belongs to.
struct PyState {
  std::shared_ptr<const Game> game;
  std::unique_ptr<AnyState> s;
  PyState clone() const { return PyState{game, s->clone()}; }
};

std::string rules_text(const pb::object& rules) {
  if (rules.is_none()) return "";
  if (pb::isinstance<pb::str>(rules)) return rules.cast<std::string>();
  if (!pb::isinstance<pb::dict>(rules)) throw InputError("rules: give a dict of rule knobs (or its JSON text)");
  return pb::module_::import("json").attr("dumps")(rules).cast<std::string>();
}

int player_or_current(const PyState& st, std::optional<int> player) {
  if (player) {
    if (*player != 0 && *player != 1) throw InputError(fmt::format("player must be 0 or 1, got {}", *player));
    return *player;
  }
  const int p = st.s->current_player();
  if (p == kChance) throw InputError("no player moves at a chance node: give player=0 or player=1");
  if (p == kTerminal) throw InputError("the game is over: give player=0 or player=1");
  return p;
}

std::vector<int> actions_of(ActionMask m) {
  std::vector<int> v;
  while (m != 0) {
    v.push_back(std::countr_zero(m));
    m &= m - 1;
  }
  return v;
}

pb::object make_rules_dict(const Game& g) { return pb::module_::import("json").attr("loads")(g.rules_json()); }

/// VectorEnv's Python face: the C++ environment and the TimeStep type.
struct PyVectorEnv {
  std::shared_ptr<const Game> game;
  std::shared_ptr<cfr::py::SpecPlayer> opponent;  // a player by spec, when the opponent is one (outlives env)
  std::unique_ptr<VectorEnv> env;
  VectorEnvOptions opts;
};

/// A player made from its spec (cfr.load_player) and the game (rules) it was made for.
struct PyLoadedPlayer {
  std::shared_ptr<Game> game;
  std::shared_ptr<cfr::py::SpecPlayer> p;
};

/// The Lost Cities state of a cfr.State for a player of `rules`, to move; InputError otherwise.
const cfr::lc::State& lc_state_to_move(const PyState& s, const cfr::lc::Rules& rules, std::string_view who) {
  const cfr::lc::State* lc = s.s->lc_state();
  if (lc == nullptr) throw cfr::InputError(fmt::format("{} plays Lost Cities, not {}", who, s.game->name()));
  if (!(lc->rules() == rules)) throw cfr::InputError(fmt::format("the state's rules are not the rules {} was made for", who));
  if (lc->is_terminal()) throw cfr::InputError("the game is over: no action to choose");
  return *lc;
}

/// A built-in bot and the game (rules) it was made for.
struct PyBot {
  std::shared_ptr<Game> game;
  std::unique_ptr<cfr::lc::Bot> bot;
};

/// The dtype of an array of actions, unless it is an integer one: a float (or bool, object, ...)
/// array is refused rather than cast, which truncated 1.9 to action 1.
std::optional<std::string> non_integer_dtype(const pb::array& a) {
  const char kind = a.dtype().kind();
  if (kind == 'i' || kind == 'u') return std::nullopt;
  return pb::str(a.dtype()).cast<std::string>();
}

using Int64Array = pb::array_t<std::int64_t, pb::array::c_style | pb::array::forcecast>;

pb::object& views_type() {
  static auto* t = new pb::object();  // leaked on purpose: lives as long as the interpreter
  return *t;
}

/// A Python callable as a match player: called with a batch of views (PlayerViews), it returns
/// one action per view. Its exceptions stop the match and reach the caller of cfr.match.
class PyPlayer final : public cfr::lc::BatchBot {
 public:
  PyPlayer(pb::object fn, std::shared_ptr<Game> game) : fn_(std::move(fn)), game_(std::move(game)) {
    name_ = pb::hasattr(fn_, "name")       ? pb::str(fn_.attr("name")).cast<std::string>()
            : pb::hasattr(fn_, "__name__") ? fn_.attr("__name__").cast<std::string>()
                                           : std::string("python");
  }
  std::string_view name() const noexcept override { return name_; }
  void choose_actions(std::span<const cfr::lc::State* const> states, std::span<cfr::Rng* const>, std::span<const int> games,
                      std::span<int> actions) override {
    pb::gil_scoped_acquire gil;
    try {
      const auto k = static_cast<pb::ssize_t>(states.size());
      const pb::ssize_t w = game_->info_state_size(), a = game_->num_distinct_actions();
      pb::array_t<float> obs({k, w});
      pb::array_t<bool> mask({k, a});
      pb::array_t<std::int64_t> game_ids(k);
      pb::list views;
      for (pb::ssize_t i = 0; i < k; ++i) {
        const cfr::lc::State& s = *states[i];
        s.encode_info_state(s.current_player(), std::span<float>(obs.mutable_data(i, 0), static_cast<std::size_t>(w)));
        const cfr::ActionMask m = s.legal_mask();
        for (pb::ssize_t j = 0; j < a; ++j) mask.mutable_data(i, 0)[j] = ((m >> j) & 1U) != 0;
        game_ids.mutable_data()[i] = games[i];
        views.append(PyState{game_, cfr::py::wrap_lost_cities_state(s)});
      }
      const pb::object out = fn_(views_type()(obs, mask, views, game_ids));
      const pb::array returned = pb::array::ensure(out);
      if (!returned || returned.ndim() != 1 || returned.shape(0) != k)
        throw cfr::InputError(fmt::format("player '{}' must return {} actions (one per view)", name_, k));
      if (const auto dtype = non_integer_dtype(returned))
        throw cfr::InputError(fmt::format("player '{}' must return integer actions, got {}", name_, *dtype));
      const auto got = Int64Array::ensure(returned);
      for (pb::ssize_t i = 0; i < k; ++i) {
        const std::int64_t act = got.data()[i];
        if (act < 0 || act >= cfr::kMaxActionsAnyGame || !cfr::mask_has(states[i]->legal_mask(), static_cast<int>(act)))
          throw cfr::IllegalActionError(
              fmt::format("player '{}' chose action {} in game {}, which is not legal there", name_, act, games[i]));
        actions[i] = static_cast<int>(act);
      }
    } catch (pb::error_already_set& e) {
      error_ = std::make_unique<pb::error_already_set>(std::move(e));
      throw std::runtime_error("python player raised");
    }
  }
  /// Re-raises the callable's own exception, if it raised one (call with the GIL held).
  void rethrow() {
    if (error_) {
      auto e = std::move(error_);
      throw std::move(*e);
    }
  }

 private:
  pb::object fn_;
  std::shared_ptr<Game> game_;
  std::string name_;
  std::unique_ptr<pb::error_already_set> error_;
};

pb::object& timestep_type() {
  static auto* t = new pb::object();  // leaked on purpose: lives as long as the interpreter
  return *t;
}

pb::object run_batch(PyVectorEnv& self, const std::optional<pb::object>& actions) {
  const pb::ssize_t n = self.env->size();
  const pb::ssize_t w = self.env->observation_size();
  const pb::ssize_t a = self.env->num_actions();
  std::vector<std::int64_t> acts;
  if (actions) {
    const pb::array given = pb::array::ensure(*actions);
    if (!given)
      throw InputError(fmt::format("VectorEnv.step: actions must be an int array of shape ({},), got a {}", n,
                                   pb::str(pb::type::of(*actions).attr("__name__")).cast<std::string>()));
    if (given.ndim() != 1 || given.shape(0) != n)
      throw InputError(fmt::format("VectorEnv.step: actions must have shape ({},), got {} dimension(s) of {} values", n,
                                   given.ndim(), given.size()));
    if (const auto dtype = non_integer_dtype(given))
      throw InputError(fmt::format("VectorEnv.step: actions must be integers, got {}", *dtype));
    const auto ints = Int64Array::ensure(given);
    acts.assign(ints.data(), ints.data() + n);
  }
  pb::array_t<float> obs({n, w});
  pb::array_t<bool> mask({n, a});
  pb::array_t<float> reward(n);
  pb::array_t<bool> done(n);
  pb::array_t<bool> truncated(n);
  pb::array_t<std::int32_t> player(n);
  const StepBuffers out{.observation = obs.mutable_data(),
                        .legal_mask = mask.mutable_data(),
                        .reward = reward.mutable_data(),
                        .done = done.mutable_data(),
                        .truncated = truncated.mutable_data(),
                        .current_player = player.mutable_data()};
  {
    pb::gil_scoped_release release;
    if (actions)
      self.env->step(acts, out);
    else
      self.env->reset(out);
  }
  return timestep_type()(obs, mask, reward, done, truncated, player);
}

// --- exact solvers and exploitability (Kuhn, Leduc) ---------------------------------------------
/// A Python policy on every information set of `tree`: a dict {information_state_string: row}
/// or a callable(state) -> row, a row being num_distinct_actions probabilities or {action:
/// probability}. The callable is asked once per information set, with one of its states (the first
/// in the tree's order). InputError naming the key of a missing or bad row.
cfr::TabularPolicy python_policy(const std::shared_ptr<Game>& game, const cfr::GameTree& tree, const pb::object& policy) {
  const int A = tree.num_distinct_actions();
  cfr::TabularPolicy out(tree);
  std::vector<bool> have(static_cast<std::size_t>(tree.num_infosets()), false);
  auto set_row = [&](int infoset, const pb::handle& row, const std::string& key) {
    auto dst = out.row(infoset);
    std::fill(dst.begin(), dst.end(), 0.0);
    if (pb::isinstance<pb::dict>(row)) {
      for (const auto& [a, p] : row.cast<pb::dict>()) {
        const int action = a.cast<int>();
        if (action < 0 || action >= A)
          throw cfr::InputError(fmt::format("policy['{}']: action {} is not an action id (0..{})", key, action, A - 1));
        dst[static_cast<std::size_t>(action)] = p.cast<double>();
      }
    } else {
      const auto v = row.cast<std::vector<double>>();
      if (static_cast<int>(v.size()) != A)
        throw cfr::InputError(fmt::format("policy['{}']: {} probabilities; the game has {} actions", key, v.size(), A));
      std::copy(v.begin(), v.end(), dst.begin());
    }
    have[static_cast<std::size_t>(infoset)] = true;
  };
  if (pb::isinstance<pb::dict>(policy)) {
    const auto d = policy.cast<pb::dict>();
    for (int i = 0; i < tree.num_infosets(); ++i) {
      const std::string& key = tree.infoset(i).key;
      if (!d.contains(key)) throw cfr::InputError(fmt::format("policy: no row for information state '{}'", key));
      set_row(i, d[pb::str(key)], key);
    }
    if (static_cast<int>(d.size()) != tree.num_infosets())
      for (const auto& [k, v] : d)
        if (tree.find_infoset(pb::str(k).cast<std::string>()) < 0)
          throw cfr::InputError(
              fmt::format("policy: '{}' is not an information state of {}", pb::str(k).cast<std::string>(), game->name()));
  } else if (PyCallable_Check(policy.ptr())) {
    // Depth first from the chance root, as the tree was built: one call per information set.
    std::vector<std::unique_ptr<cfr::py::AnyState>> stack;
    stack.push_back(game->new_initial_state(std::nullopt, std::nullopt));
    while (!stack.empty()) {
      std::unique_ptr<cfr::py::AnyState> st = std::move(stack.back());
      stack.pop_back();
      if (st->is_terminal()) continue;
      if (!st->is_chance_node()) {
        const int p = st->current_player();
        const std::string key = st->information_state_string(p);
        const int i = tree.find_infoset(key);
        if (i < 0) throw std::logic_error("information state '" + key + "' is not in the game's tree");
        if (!have[static_cast<std::size_t>(i)]) {
          pb::object row = policy(PyState{game, st->clone()});
          set_row(i, row, key);
        }
      }
      for (cfr::ActionMask m = st->legal_mask(); m != 0; m &= m - 1) {
        auto child = st->clone();
        child->apply_action(std::countr_zero(m));
        stack.push_back(std::move(child));
      }
    }
  } else {
    throw cfr::InputError("policy: expected a dict {information_state_string: probabilities} or a callable(state)");
  }
  out.validate("policy");
  return out;
}

pb::dict policy_dict(const cfr::TabularPolicy& policy) {
  pb::dict d;
  const cfr::GameTree& tree = policy.tree();
  for (int i = 0; i < tree.num_infosets(); ++i) {
    const auto row = policy.row(i);
    d[pb::str(tree.infoset(i).key)] = std::vector<double>(row.begin(), row.end());
  }
  return d;
}

// --- traversals with a Python evaluator -----------------------------------------------------
pb::object& samples_type() {
  static auto* t = new pb::object();  // leaked on purpose: lives as long as the interpreter
  return *t;
}
pb::object& traversals_type() {
  static auto* t = new pb::object();  // leaked on purpose: lives as long as the interpreter
  return *t;
}

/// A sample buffer as NumPy arrays (a cfr.Samples); weights as the trainer weighs them (the
/// iteration under training_weighting.mode = lcfr, else 1).
pb::object samples_of(const cfr::SampleBuffer& b, bool linear) {
  const auto n = static_cast<pb::ssize_t>(b.size());
  const auto w = static_cast<pb::ssize_t>(b.input_width), a = static_cast<pb::ssize_t>(b.target_width);
  pb::array_t<float> inputs({n, w}), targets({n, a}), weights(n);
  pb::array_t<bool> legal({n, a});
  pb::array_t<std::int32_t> iterations(n);
  pb::array_t<std::int8_t> players(n);
  std::copy(b.inputs.begin(), b.inputs.end(), inputs.mutable_data());
  std::copy(b.targets.begin(), b.targets.end(), targets.mutable_data());
  for (pb::ssize_t i = 0; i < n; ++i) {
    const auto k = static_cast<std::size_t>(i);
    for (pb::ssize_t j = 0; j < a; ++j) legal.mutable_data()[i * a + j] = cfr::mask_has(b.masks[k], static_cast<int>(j));
    iterations.mutable_data()[i] = b.iterations[k];
    players.mutable_data()[i] = b.players[k];
    weights.mutable_data()[i] = linear ? static_cast<float>(b.iterations[k]) : 1.0F;
  }
  return samples_type()(inputs, targets, legal, weights, iterations, players);
}

/// cfr.traverse's config: None (cfr-run's defaults), a dict of sections or a TOML path.
cfr::py::ConfigSource config_source(const pb::object& config, const std::vector<std::string>& set) {
  cfr::py::ConfigSource src;
  if (pb::isinstance<pb::dict>(config)) {
    src.text = cfr::py::toml_from_json_text(pb::module_::import("json").attr("dumps")(config).cast<std::string>());
  } else if (!config.is_none()) {
    src.path = pb::str(pb::module_::import("os").attr("fspath")(config)).cast<std::string>();
  }
  src.set = set;
  return src;
}

}  // namespace cfr::py_module

PYBIND11_MODULE(cfr, m) {
  using namespace cfr::py_module;
  namespace cp = cfr::py;

  m.doc() = R"doc(The cfr engine from Python (docs/python.md).

Games with OpenSpiel's vocabulary (load_game, Game.new_initial_state, State.legal_actions,
apply_action, returns, information_state_tensor, ...) over the C++ engine: Lost Cities (any
rules), Kuhn and Leduc poker. VectorEnv steps n games at once in C++ with batched NumPy
observations and legal-action masks.

    import cfr
    game = cfr.load_game("lost_cities")
    state = game.new_initial_state(seed=7)
    while not state.is_terminal():
        state.apply_action(state.legal_actions()[0])
    print(state.returns())

Bots by name (make_bot) and cfr-arena's matches (match), with Python callables as players.
Deep CFR traversals run by the engine with a Python callable as the networks (traverse).

Errors carry the engine's messages: bad rules, decks, players or serialized text raise
cfr.InputError, an illegal action cfr.IllegalActionError (both are ValueError).)doc";

  static pb::exception<cfr::InputError> input_error(m, "InputError", PyExc_ValueError);
  static pb::exception<cfr::IllegalActionError> illegal_error(m, "IllegalActionError", PyExc_ValueError);
  input_error.doc() = "Bad input (rules, deck, player, serialized state, options): the engine's message. A ValueError.";
  illegal_error.doc() = "An action that is not legal in the state it was applied to. A ValueError.";
  pb::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const cfr::InputError& e) {
      PyErr_SetString(input_error.ptr(), e.what());
    } catch (const cfr::IllegalActionError& e) {
      PyErr_SetString(illegal_error.ptr(), e.what());
    } catch (const cfr::CheckError& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    }
  });

  m.attr("CHANCE_PLAYER") = kChance;
  m.attr("TERMINAL_PLAYER") = kTerminal;

  m.def("registered_games", &cp::registered_games, "The names load_game accepts, in registration order.");

  pb::class_<Game, std::shared_ptr<Game>> game_cls(m, "Game", "A registered game with its rules; made by load_game().");
  pb::class_<PyState> state_cls(m, "State", "One state of a game (Game.new_initial_state()): a plain value; clone() copies it.");

  m.def(
      "load_game",
      [](const std::string& name, const pb::object& rules) { return std::make_shared<Game>(name, rules_text(rules)); },
      pb::arg("name"), pb::arg("rules") = pb::none(),
      R"doc(The registered game `name` ("lost_cities", "kuhn", "leduc"; see registered_games()).

rules: Lost Cities' rule knobs as a dict (or its JSON text), e.g. {"n_colors": 3, "hand_size": 5};
unknown knobs and values out of range raise InputError with the engine's message. The other games
take no rules.)doc");

  game_cls.def_property_readonly("name", &Game::name, "The game's registered name.")
      .def_property_readonly("rules", &make_rules_dict, "Every rule knob as a dict (empty for games without rules).")
      .def_property_readonly("is_enumerable", &Game::enumerable,
                             "Whether the game has explicit chance nodes and exact solvers (Kuhn, Leduc).")
      .def("num_distinct_actions", &Game::num_distinct_actions, "Number of action ids (Lost Cities: 2·hand_size + 1 + n_colors).")
      .def("information_state_tensor_size", &Game::info_state_size,
           "Length of information_state_tensor() (Lost Cities: 297 with the default rules; Kuhn 11; Leduc 24).")
      .def(
          "information_state_tensor_shape", [](const Game& g) { return std::vector<int>{g.info_state_size()}; },
          "[information_state_tensor_size()], OpenSpiel's spelling.")
      .def(
          "num_players", [](const Game&) { return 2; }, "Always 2.")
      .def(
          "new_initial_state",
          [](const std::shared_ptr<Game>& g, std::optional<std::uint64_t> seed, std::optional<std::vector<int>> deck) {
            return PyState{g, g->new_initial_state(seed, deck)};
          },
          pb::arg("seed") = pb::none(), pb::arg("deck") = pb::none(),
          R"doc(A new game.

Lost Cities: dealt from `seed` (State::deal; default 0, the deal cfr-arena's seeds give) or from
`deck`, the public card ids before dealing with the top last (the order transcripts record).
Kuhn/Leduc: without a seed, the chance root (current_player() == CHANCE_PLAYER; apply a chance
outcome's action); with a seed, every chance node is resolved from Rng(seed), now and later.)doc")
      .def(
          "deserialize_state",
          [](const std::shared_ptr<Game>& g, const std::string& text) {
            return PyState{g, g->deserialize_state(text)};
          },
          pb::arg("text"), "The state State.serialize() wrote; InputError naming what is wrong.")
      .def("__repr__", [](const Game& g) { return fmt::format("cfr.load_game(\"{}\", rules={})", g.name(), g.rules_json()); })
      .def("__eq__", [](const Game& a, const Game& b) { return a.name() == b.name() && a.rules() == b.rules(); })
      .def("__hash__", [](const Game& g) { return pb::hash(pb::str(g.name() + g.rules_json())); });

  state_cls
      .def(
          "current_player", [](const PyState& s) { return s.s->current_player(); },
          "0 or 1 at decisions, CHANCE_PLAYER (-1) at chance nodes, TERMINAL_PLAYER (-4) when the game is over.")
      .def(
          "is_terminal", [](const PyState& s) { return s.s->is_terminal(); }, "Whether the game is over.")
      .def(
          "is_chance_node", [](const PyState& s) { return s.s->is_chance_node(); },
          "Whether chance moves next (Kuhn/Leduc made without a seed; Lost Cities never).")
      .def(
          "chance_outcomes", [](const PyState& s) { return s.s->chance_outcomes(); },
          "[(action, probability)] at a chance node; [] elsewhere.")
      .def(
          "legal_actions", [](const PyState& s) { return actions_of(s.s->legal_mask()); },
          "The legal action ids in increasing order (chance nodes: the outcomes; terminal: []).")
      .def(
          "legal_actions_mask",
          [](const PyState& s) {
            const int n = s.s->num_distinct_actions();
            pb::array_t<bool> out(n);
            const cfr::ActionMask bits = s.s->legal_mask();
            for (int a = 0; a < n; ++a) out.mutable_data()[a] = ((bits >> a) & 1U) != 0;
            return out;
          },
          "A bool array of num_distinct_actions(): True where the action is legal.")
      .def(
          "num_distinct_actions", [](const PyState& s) { return s.s->num_distinct_actions(); }, "As Game.num_distinct_actions().")
      .def(
          "apply_action", [](PyState& s, int action) { s.s->apply_action(action); }, pb::arg("action"),
          "Applies a legal action (IllegalActionError, a ValueError, otherwise; the state is unchanged).")
      .def(
          "returns",
          [](const PyState& s) {
            return std::vector<double>{s.s->returns(0), s.s->returns(1)};
          },
          "[utility of player 0, of player 1] (zero-sum). Lost Cities: the score difference, at any state; "
          "Kuhn/Leduc: 0 before the end.")
      .def(
          "player_return",
          [](const PyState& s, int p) {
            if (p != 0 && p != 1) throw cfr::InputError(fmt::format("player must be 0 or 1, got {}", p));
            return s.s->returns(p);
          },
          pb::arg("player"), "returns()[player].")
      .def(
          "scores", [](const PyState& s) { return s.s->scores(); },
          "Lost Cities: (score of player 0, score of player 1); other games raise InputError.")
      .def(
          "information_state_tensor",
          [](const PyState& s, std::optional<int> player) {
            const int p = player_or_current(s, player);
            pb::array_t<float> out(s.s->info_state_size());
            s.s->encode(p, out.mutable_data());
            return out;
          },
          pb::arg("player") = pb::none(),
          "What `player` (default: the player to move) knows, as the networks see it: a float32 array of "
          "Game.information_state_tensor_size() (Lost Cities: the 297-float encoding).")
      .def(
          "observation_string",
          [](const PyState& s, std::optional<int> player) { return s.s->observation_string(player_or_current(s, player)); },
          pb::arg("player") = pb::none(),
          "`player`'s view in words (Lost Cities: own hand, expeditions, piles, deck size, scores; Kuhn/Leduc: "
          "the information-state key).")
      .def(
          "information_state_string",
          [](const PyState& s, std::optional<int> player) { return s.s->information_state_string(player_or_current(s, player)); },
          pb::arg("player") = pb::none(),
          "Kuhn/Leduc: the information-state key of policy files (e.g. 'K|pb'); Lost Cities: observation_string().")
      .def(
          "action_to_string", [](const PyState& s, int action) { return s.s->action_to_string(action); }, pb::arg("action"),
          "The action in words, for the player to move (e.g. 'play c0:7', 'draw deck', 'bet', 'deal K').")
      .def("clone", &PyState::clone, "An independent copy.")
      .def("__copy__", &PyState::clone, "An independent copy.")
      .def(
          "__deepcopy__", [](const PyState& s, const pb::object&) { return s.clone(); }, pb::arg("memo"), "An independent copy.")
      .def(
          "resample_hidden",
          [](const PyState& s, std::uint64_t rng_seed, std::optional<int> player) {
            const int p = player_or_current(s, player);
            return PyState{s.game, s.s->resample_hidden(p, rng_seed)};
          },
          pb::arg("rng_seed"), pb::arg("player") = pb::none(),
          "A copy in which what `player` (default: the player to move) cannot see is redrawn from Rng(rng_seed): "
          "the same information_state_tensor(player). This state is unchanged.")
      .def(
          "history", [](const PyState& s) { return s.s->history(); },
          "Every action applied since the deal, chance outcomes included.")
      .def(
          "serialize", [](const PyState& s) { return s.s->serialize(); },
          "One line of JSON that Game.deserialize_state() reads back to an equal state (Lost Cities: a "
          "transcript line, engine/games/replay.h, plus any resamples).")
      .def(
          "game", [](const PyState& s) { return std::const_pointer_cast<Game>(s.game); }, "The state's game.")
      .def("__eq__", [](const PyState& a, const PyState& b) { return a.s->equals(*b.s); })
      .def("__str__", [](const PyState& s) { return s.s->to_string(); })
      .def("__repr__", [](const PyState& s) { return fmt::format("<cfr.State {} {}>", s.game->name(), s.s->serialize()); })
      .def(pb::pickle([](const PyState& s) { return pb::make_tuple(s.game->name(), s.game->rules_json(), s.s->serialize()); },
                      [](const pb::tuple& t) {
                        auto g = std::make_shared<Game>(t[0].cast<std::string>(), t[1].cast<std::string>());
                        return PyState{g, g->deserialize_state(t[2].cast<std::string>())};
                      }));

  // --- VectorEnv ---------------------------------------------------------------------------
  pb::object namedtuple = pb::module_::import("collections").attr("namedtuple");
  timestep_type() =
      namedtuple("TimeStep", pb::make_tuple("observation", "legal_mask", "reward", "done", "truncated", "current_player"));
  timestep_type().attr("__module__") = "cfr";
  timestep_type().attr("__doc__") = R"doc(What VectorEnv.reset() and step() return, one row per game:
observation (n, W) float32: the player to move's information_state_tensor;
legal_mask (n, A) bool; reward (n,) float32: at a game's end the return of the seat that acted for
you (self-play: the player who made the last move; with an opponent: your seat), else 0;
done (n,) bool: the game ended in this step and the row already holds the next game;
truncated (n,) bool: it ended at max_steps; current_player (n,) int32.)doc";
  m.attr("TimeStep") = timestep_type();
  views_type() = namedtuple("PlayerViews", pb::make_tuple("observation", "legal_mask", "states", "games"));
  views_type().attr("__module__") = "cfr";
  views_type().attr("__doc__") = R"doc(What a Python player gets from cfr.match, one row per game where it is to move:
observation (k, W) float32: the player to move's information_state_tensor; legal_mask (k, A) bool;
states: k cfr.State copies (serialize() is unavailable on them); games: (k,) int64 match game indices.)doc";
  m.attr("PlayerViews") = views_type();

  pb::class_<PyVectorEnv>(m, "VectorEnv", R"doc(n games stepped together in C++.

    env = cfr.VectorEnv(cfr.load_game("lost_cities"), n=1024, seed=0)
    ts = env.reset()
    rng = numpy.random.default_rng(0)
    for _ in range(1000):
        actions = (rng.random(ts.legal_mask.shape) * ts.legal_mask).argmax(axis=1)
        ts = env.step(actions)

Games reset automatically. Slot i's k-th game is dealt with derive_seed(seed, i, k) (deal_seeds()):
the game game.new_initial_state(seed=that) makes. opponent: None (self-play), "random", a Lost
Cities bot (cfr.bot_names()), a player's spec ("checkpoint:PATH", "search:PATH?k=3&n=8", ...) or
a cfr.Player (load_player) that moves inside C++ while you play agent_seat (0, 1, or -1:
alternating, slot i's k-th game in seat (i + k) % 2); a network decides every game where it is to
move in one batched forward. The GIL is released while C++ steps.)doc")
      .def(pb::init([](const pb::object& g, int n, std::uint64_t seed, const pb::object& opponent, int agent_seat, int max_steps,
                       int threads) {
             std::shared_ptr<Game> game =
                 pb::isinstance<pb::str>(g) ? std::make_shared<Game>(g.cast<std::string>(), "") : g.cast<std::shared_ptr<Game>>();
             VectorEnvOptions o{
                 .n = n, .seed = seed, .opponent = "", .agent_seat = agent_seat, .max_steps = max_steps, .threads = threads};
             const bool lost_cities = game->name() == cfr::lc::State::kName;
             std::shared_ptr<cp::SpecPlayer> player;
             if (pb::isinstance<PyLoadedPlayer>(opponent)) {
               player = opponent.cast<const PyLoadedPlayer&>().p;
               if (!lost_cities)
                 throw cfr::InputError(
                     fmt::format("VectorEnv: game '{}' has no opponent '{}'; its opponents: random", game->name(), player->spec));
               if (!(player->rules == game->rules()))
                 throw cfr::InputError(
                     fmt::format("VectorEnv: the opponent '{}' was made for other rules than the game's", player->spec));
             } else if (pb::isinstance<pb::str>(opponent)) {
               o.opponent = opponent.cast<std::string>();
               if (lost_cities && o.opponent.find(':') != std::string::npos) {  // checkpoint:, search:, external:, ...
                 pb::gil_scoped_release release;
                 player = cp::load_spec_player(o.opponent, game->rules());
               }
             } else if (!opponent.is_none()) {
               throw cfr::InputError("VectorEnv: opponent must be None, a player's name or spec, or a cfr.Player");
             }
             if (player) {
               o.opponent = player->spec;  // a bot by name is made per thread, as before; the others play in batches
               if (player->batched()) {
                 o.opponent_player = player->player.batch.get();
                 o.opponent_lock = &player->mu;
               }
             }
             auto env = std::make_unique<VectorEnv>(*game, o);
             return PyVectorEnv{game, player, std::move(env), o};
           }),
           pb::arg("game"), pb::arg("n"), pb::arg("seed") = 0, pb::arg("opponent") = pb::none(), pb::arg("agent_seat") = 0,
           pb::arg("max_steps") = 10000, pb::arg("threads") = 1,
           "game: a Game or a registered name; n ≥ 1 games; seed: the deals' base seed; max_steps: a game still "
           "running after that many actions ends truncated; threads: C++ threads stepping contiguous slices of "
           "the games (the results do not depend on it).")
      .def(
          "reset", [](PyVectorEnv& self) { return run_batch(self, std::nullopt); },
          "Deals every slot's next game; returns a TimeStep (reward, done, truncated all zero).")
      .def(
          "step", [](PyVectorEnv& self, const pb::object& actions) { return run_batch(self, actions); }, pb::arg("actions"),
          "Applies actions[i] in game i (an int array of shape (n,), any integer dtype), lets the opponent answer, "
          "resets finished games; returns a TimeStep. Actions of another dtype (a float array) raise InputError; an "
          "illegal action raises IllegalActionError naming the game, and nothing is applied.")
      .def(
          "deal_seeds", [](const PyVectorEnv& self) { return self.env->deal_seeds(); },
          "Each slot's current deal seed: game.new_initial_state(seed=s) is the same game.")
      .def(
          "episodes", [](const PyVectorEnv& self) { return self.env->episodes(); },
          "Each slot's current game index k (games dealt − 1).")
      .def(
          "agent_seats", [](const PyVectorEnv& self) { return self.env->agent_seats(); },
          "Each slot's seat for the caller (self-play: the player to move).")
      .def_property_readonly(
          "num_envs", [](const PyVectorEnv& self) { return self.env->size(); }, "n.")
      .def_property_readonly(
          "observation_size", [](const PyVectorEnv& self) { return self.env->observation_size(); },
          "Width of TimeStep.observation.")
      .def_property_readonly(
          "num_actions", [](const PyVectorEnv& self) { return self.env->num_actions(); }, "Width of TimeStep.legal_mask.")
      .def_property_readonly(
          "game", [](const PyVectorEnv& self) { return std::const_pointer_cast<Game>(self.game); }, "The game.")
      .def(
          "__len__", [](const PyVectorEnv& self) { return self.env->size(); }, "n.")
      .def("__repr__", [](const PyVectorEnv& self) {
        return fmt::format("<cfr.VectorEnv {} n={} seed={} opponent={}>", self.game->name(), self.opts.n, self.opts.seed,
                           self.opts.opponent.empty() ? "None" : self.opts.opponent);
      });

  m.def("bot_names", &cfr::lc::bot_names, "The Lost Cities bots by name (make_bot, VectorEnv's opponent, match).");

  // --- bots and matches --------------------------------------------------------------------
  pb::class_<PyBot>(m, "Bot", "A built-in Lost Cities bot (make_bot()); it keeps no state between calls.")
      .def_property_readonly(
          "name", [](const PyBot& b) { return std::string(b.bot->name()); }, "The bot's name.")
      .def_property_readonly(
          "deterministic", [](const PyBot& b) { return b.bot->deterministic(); },
          "Whether its choice is a function of the state alone (it never draws from its RNG).")
      .def(
          "choose_action",
          [](PyBot& b, const PyState& s, std::uint64_t rng_seed) {
            const cfr::lc::State* lc = s.s->lc_state();
            if (lc == nullptr) throw cfr::InputError(fmt::format("bots play Lost Cities, not {}", s.game->name()));
            if (!(lc->rules() == b.game->rules()))
              throw cfr::InputError("the state's rules are not the rules this bot was made for");
            if (lc->is_terminal()) throw cfr::InputError("the game is over: no action to choose");
            cfr::Rng rng(rng_seed);
            return b.bot->choose_action(*lc, rng);
          },
          pb::arg("state"), pb::arg("rng_seed") = 0,
          "The bot's legal action for the player to move; a bot that samples draws from Rng(rng_seed).")
      .def("__repr__", [](const PyBot& b) { return fmt::format("<cfr.Bot {}>", b.bot->name()); });
  m.def(
      "make_bot",
      [](const std::string& name, const std::optional<std::shared_ptr<Game>>& g) {
        std::shared_ptr<Game> game = g ? *g : std::make_shared<Game>("lost_cities", "");
        if (game->name() != cfr::lc::State::kName)
          throw cfr::InputError(fmt::format("bots play Lost Cities, not {}", game->name()));
        return PyBot{game, cfr::lc::make_bot(name, game->rules())};
      },
      pb::arg("name"), pb::arg("game") = pb::none(),
      "A built-in bot by name (bot_names()) for a Lost Cities game (default: the standard rules); "
      "InputError listing the bots for any other name.");

  m.attr("TRAINED_PLAYERS") = cp::trained_players_available();
  pb::class_<PyLoadedPlayer>(m, "Player",
                             R"doc(A Lost Cities player made from its spec by load_player(), as cfr-arena makes its sides.

    p = cfr.load_player("checkpoint:models/lost-cities-league")
    actions = p.choose_actions(states)        # one batched forward for all of them
    cfr.match(p, "heuristic_balanced", games=1000, seed=1)

A network decides many games per call (choose_actions, the matches, VectorEnv's opponent): one
forward for all of them. One caller plays it at a time (calls from other threads wait).)doc")
      .def_property_readonly(
          "name", [](const PyLoadedPlayer& p) { return p.p->name(); },
          "Its name in match reports: the spec as given for a trained player (\"checkpoint:PATH\"), the bot's name.")
      .def_property_readonly(
          "spec", [](const PyLoadedPlayer& p) { return p.p->spec; }, "The spec it was made from.")
      .def_property_readonly(
          "batched", [](const PyLoadedPlayer& p) { return p.p->batched(); },
          "Whether it decides many games in one call (networks, the search player, external players) rather than "
          "move by move (the bots).")
      .def_property_readonly(
          "game", [](const PyLoadedPlayer& p) { return p.game; }, "The game (rules) it was made for.")
      .def(
          "choose_actions",
          [](PyLoadedPlayer& self, const pb::object& states, const std::optional<std::vector<std::uint64_t>>& rng_seeds,
             const std::optional<std::vector<int>>& games) {
            pb::object list = states;
            std::optional<std::vector<int>> ids = games;
            if (pb::isinstance(states, views_type())) {  // a PlayerViews batch: its states and game indices
              list = states.attr("states");
              if (!ids) ids = states.attr("games").cast<std::vector<int>>();
            }
            // Copies of the states: the GIL is released while the player decides, and then nothing
            // may point into a Python object (a generator's items are freed as it goes on; another
            // thread may change a list's states meanwhile).
            std::vector<cfr::lc::State> copies;
            for (const auto& item : list) {
              if (!pb::isinstance<PyState>(item))
                throw cfr::InputError("Player.choose_actions: give a sequence of cfr.State (or a cfr.PlayerViews)");
              copies.push_back(lc_state_to_move(item.cast<const PyState&>(), self.game->rules(), self.p->spec));
            }
            std::vector<const cfr::lc::State*> ptrs;
            for (const cfr::lc::State& c : copies) ptrs.push_back(&c);
            const std::size_t k = ptrs.size();
            std::vector<std::uint64_t> seeds = rng_seeds.value_or(std::vector<std::uint64_t>(k, 0));
            if (!ids) {
              ids.emplace(k);
              for (std::size_t i = 0; i < k; ++i) (*ids)[i] = static_cast<int>(i);
            }
            if (seeds.size() != k || ids->size() != k)
              throw cfr::InputError(
                  fmt::format("Player.choose_actions: {} states, {} rng_seeds and {} games: give one of each per state", k,
                              seeds.size(), ids->size()));
            std::vector<int> actions;
            {
              pb::gil_scoped_release release;
              actions = cp::choose_actions(*self.p, ptrs, seeds, *ids);
            }
            pb::array_t<std::int64_t> out(static_cast<pb::ssize_t>(k));
            std::copy(actions.begin(), actions.end(), out.mutable_data());
            return out;
          },
          pb::arg("states"), pb::arg("rng_seeds") = pb::none(), pb::arg("games") = pb::none(),
          R"doc(The player's legal actions for a batch of states (each with a player to move), as an int64 array: a
network decides all of them in one forward, a bot one by one. states: a sequence of cfr.State, or a
cfr.PlayerViews (its states; games defaults to its games). A player that samples draws state i's
move from Rng(rng_seeds[i]) (default 0 each); games[i] is the game index it sees (default i; the
search player seeds its deals with it). The GIL is released while it decides. InputError for a
state of another game or rules, a finished game, or an external player (it plays only in matches
and VectorEnv).)doc")
      .def(
          "choose_action",
          [](PyLoadedPlayer& self, const PyState& s, std::uint64_t rng_seed, int game) {
            const cfr::lc::State copy =
                lc_state_to_move(s, self.game->rules(), self.p->spec);  // no pointer into s without the GIL
            const cfr::lc::State* lc = &copy;
            const std::uint64_t seeds[1] = {rng_seed};
            const int ids[1] = {game};
            pb::gil_scoped_release release;
            return cp::choose_actions(*self.p, std::span<const cfr::lc::State* const>(&lc, 1), seeds, ids)[0];
          },
          pb::arg("state"), pb::arg("rng_seed") = 0, pb::arg("game") = 0,
          "The player's legal action for the player to move in `state` (choose_actions of one state).")
      .def("__repr__", [](const PyLoadedPlayer& p) { return fmt::format("<cfr.Player {}>", p.p->spec); });
  m.def(
      "load_player",
      [](const std::string& spec, const std::optional<std::shared_ptr<Game>>& g) {
        std::shared_ptr<Game> game = g ? *g : std::make_shared<Game>("lost_cities", "");
        if (game->name() != cfr::lc::State::kName)
          throw cfr::InputError(fmt::format("player '{}': players play Lost Cities, not {}", spec, game->name()));
        std::shared_ptr<cp::SpecPlayer> p;
        {
          pb::gil_scoped_release release;
          p = cp::load_spec_player(spec, game->rules());
        }
        return PyLoadedPlayer{game, std::move(p)};
      },
      pb::arg("spec"), pb::arg("game") = pb::none(),
      R"doc(A Lost Cities player by spec, made by cfr-arena's own factory: a bot's name (bot_names()),
"checkpoint:PATH" (a trained network, greedy: a run directory, a checkpoint directory or an
exported model such as models/lost-cities-league), "checkpoint-sampled:PATH" (sampling its
policy), "snapshots:RUN_DIR", "search:PATH?k=3&n=8" (the determinized search player,
docs/search.md) or "external:COMMAND". game: the Lost Cities rules it plays (default standard).

Returns a cfr.Player for cfr.match (either side), VectorEnv's opponent, or its own choose_actions.
InputError naming the spec for an unknown bot, a missing path, a path that is not a checkpoint, a
checkpoint of another game or rules, or a bad option. Trained players need a module built with
LibTorch (cfr.TRAINED_PLAYERS).)doc");
  m.def(
      "blas_core", [] { return cfr::blas_core(); },
      "The OpenBLAS kernel set this process runs (\"SkylakeX\", \"Haswell\", \"Prescott\": the generic fallback, ...); "
      "\"\" without OpenBLAS. Chosen when OpenBLAS loads: set OPENBLAS_CORETYPE before Python starts (docs/python.md).");

  m.def(
      "exploitability",
      [](const std::shared_ptr<Game>& game, const pb::object& policy) {
        const cfr::GameTree tree = cfr::build_game_tree(game->name());
        const cfr::TabularPolicy pol = python_policy(game, tree, policy);
        const cfr::ExploitabilityReport r = cfr::exploitability(pol);
        pb::dict d;
        d["nash_conv"] = r.nash_conv;
        d["exploitability"] = r.exploitability;
        d["best_response_values"] = std::vector<double>{r.br_value[0], r.br_value[1]};
        d["on_policy_values"] = std::vector<double>{r.on_policy_value[0], r.on_policy_value[1]};
        return d;
      },
      pb::arg("game"), pb::arg("policy"),
      R"doc(Exact NashConv and exploitability of `policy` on an enumerable game (Kuhn, Leduc), as cfr-exploit
computes them: {"nash_conv", "exploitability" (NashConv / 2), "best_response_values" [p0, p1],
"on_policy_values" [p0, p1]}.

policy: a dict {information_state_string: row} (every information state of the game; the keys
State.information_state_string gives), or a callable(state) -> row, asked once per information
state. A row is num_distinct_actions() probabilities, or {action: probability}; zero on illegal
actions, summing to 1. InputError names a missing or bad row.)doc");
  m.def(
      "solve",
      [](const std::shared_ptr<Game>& game, const std::string& algorithm, int iterations, std::uint64_t seed) {
        if (iterations < 0) throw cfr::InputError(fmt::format("solve: iterations = {} must be >= 0", iterations));
        const cfr::GameTree tree = cfr::build_game_tree(game->name());
        cfr::TabularSolver solver(tree, {.algo = cfr::parse_tabular_algo(algorithm), .seed = seed});
        {
          pb::gil_scoped_release release;
          for (int i = 0; i < iterations; ++i) solver.run_iteration();
        }
        return policy_dict(solver.average_policy());
      },
      pb::arg("game"), pb::arg("algorithm") = "cfr+", pb::arg("iterations") = 1000, pb::arg("seed") = 0,
      R"doc(The average policy of a tabular solver after `iterations` (cfr-solve's): algorithm "cfr",
"cfr+", "lcfr", "es-mccfr" or "os-mccfr" (seeded). Returns {information_state_string:
probabilities}, the dict exploitability() takes. Kuhn and Leduc only. The GIL is released while it
solves.)doc");

  m.def(
      "train",
      [](const pb::object& config, const std::string& run_dir, const std::vector<std::string>& set, const pb::object& on_metrics,
         bool resume, bool allow_training_changes, const std::optional<std::string>& cfr_run) -> pb::object {
        namespace fs = std::filesystem;
        const std::string program =
            cfr_run ? *cfr_run : cfr::py::find_cfr_run(pb::module_::import("cfr").attr("__file__").cast<std::string>());
        std::vector<std::string> args;
        std::string config_file;  // a dict's TOML, removed afterwards
        struct Remove {
          std::string path;
          ~Remove() {
            std::error_code ec;
            if (!path.empty()) fs::remove(path, ec);
          }
        } remove_config;
        if (resume) {
          if (!config.is_none())
            throw cfr::InputError("cfr.train: resume=True continues run_dir with its own config; pass config=None");
          args = {"--resume", run_dir};
          if (allow_training_changes) args.push_back("--allow-training-changes");
        } else if (pb::isinstance<pb::dict>(config)) {
          const std::string json = pb::module_::import("json").attr("dumps")(config).cast<std::string>();
          const std::string text = cfr::py::toml_from_json_text(json);
          const char* tmp = std::getenv("TMPDIR");
          std::string pattern =
              (fs::path(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") / "cfr-train-config-XXXXXX.toml").string();
          const int fd = ::mkstemps(pattern.data(), 5);
          if (fd < 0) throw cfr::InputError(fmt::format("cfr.train: cannot create a temporary file like {}", pattern));
          ::close(fd);
          remove_config.path = pattern;
          std::ofstream(pattern) << text;
          args = {pattern, "--run-dir", run_dir};
        } else if (!config.is_none()) {
          args = {pb::str(pb::module_::import("os").attr("fspath")(config)).cast<std::string>(), "--run-dir", run_dir};
        } else {
          throw cfr::InputError("cfr.train: give a config (a TOML path or a dict), or resume=True");
        }
        for (const auto& s : set) {
          args.push_back("--set");
          args.push_back(s);
        }
        const pb::object loads = pb::module_::import("json").attr("loads");
        cfr::py::TrainProcess proc(program, args, (fs::path(run_dir) / "metrics.jsonl").string());
        pb::object last = pb::none();
        for (;;) {
          std::optional<int> rc;
          {
            pb::gil_scoped_release release;
            rc = proc.wait_for(0.2);
          }
          try {
            for (const auto& line : proc.new_metrics_lines()) {
              last = loads(line);
              if (!on_metrics.is_none()) on_metrics(last);
            }
            if (PyErr_CheckSignals() != 0) throw pb::error_already_set();
          } catch (...) {  // Ctrl-C or the callback's exception: stop the run as Ctrl-C stops cfr-run
            proc.interrupt();
            pb::gil_scoped_release release;
            (void)proc.wait_for(-1);
            throw;
          }
          if (rc) {
            const std::string err = proc.stderr_text();
            if (!err.empty()) pb::module_::import("sys").attr("stderr").attr("write")(err);
            if (*rc == 0) return last;
            std::string message = err;
            while (!message.empty() && message.back() == '\n') message.pop_back();
            if (const auto nl = message.rfind('\n'); nl != std::string::npos) message = message.substr(nl + 1);
            if (*rc == 2) throw cfr::InputError(message.empty() ? "cfr-run: bad input (exit 2)" : message);
            throw std::runtime_error(fmt::format("cfr-run exited {}: {}", *rc, message));
          }
        }
      },
      pb::arg("config"), pb::arg("run_dir"), pb::arg("set") = std::vector<std::string>{}, pb::arg("on_metrics") = pb::none(),
      pb::arg("resume") = false, pb::arg("allow_training_changes") = false, pb::arg("cfr_run") = pb::none(),
      R"doc(Trains any registered algorithm as cfr-run does, in run_dir, and returns the last metrics line (a
dict; None when no iteration completed).

config: a TOML path, or a dict of sections ({"algorithm": {"name": "mmd"}, "run": {"game": "kuhn",
"max_iterations": 100}, "scheduler": {"interleaved": {"window": 64}}}) written as TOML; set: a list
of "section.key=value" overrides (cfr-run --set); resume=True continues run_dir (config=None) from
its latest checkpoint. on_metrics(dict) is called with every metrics.jsonl line as it is written.

It runs the cfr-run of the same build (build/bin/cfr-run beside this module, or $CFR_BIN/cfr-run, or
cfr_run=PATH) as a child process: the run directory, metrics, checkpoints and resume are cfr-run's.
Its progress goes to stdout. Ctrl-C (KeyboardInterrupt) or an exception from on_metrics stops it
as Ctrl-C stops cfr-run (the current step ends, the latest checkpoint is kept) and is then raised.
A bad config raises InputError with cfr-run's message; the GIL is released while it waits.)doc");

  pb::object samples_nt = pb::module_::import("collections").attr("namedtuple");
  samples_type() = samples_nt("Samples", pb::make_tuple("inputs", "targets", "legal_mask", "weights", "iterations", "players"));
  samples_type().attr("__module__") = "cfr";
  samples_type().attr("__doc__") = R"doc(One kind of training sample from cfr.traverse, one row per sample, in traversal order:
inputs (N, W) float32: the information state's encoding; targets (N, A) float32: the regrets
(advantage samples) or the strategy σ (strategy samples); legal_mask (N, A) bool; weights (N,)
float32: the sample's training weight (its iteration under training_weighting.mode = "lcfr", else
1); iterations (N,) int32; players (N,) int8: whose decision it was.)doc";
  m.attr("Samples") = samples_type();
  traversals_type() = samples_nt("Traversals", pb::make_tuple("advantage", "strategy", "stats"));
  traversals_type().attr("__module__") = "cfr";
  traversals_type().attr("__doc__") = R"doc(What cfr.traverse returns: advantage and strategy (cfr.Samples), and stats (a dict:
traversals, nodes, cutoffs, seconds, nodes_per_second, forwards, requests, mean_batch,
evaluate_seconds, per-network calls, rows, seconds and nonfinite_outputs of a Python evaluator,
the advantage and strategy sample digests as cfr-run computes them, the seed, scheduler and
options used).)doc";
  m.attr("Traversals") = traversals_type();

  m.def(
      "traverse",
      [](const pb::object& game, const pb::object& evaluator, std::optional<int> traversals, int iteration, int traverser,
         std::optional<std::uint64_t> seed, std::optional<std::string> scheduler,
         const std::map<std::string, int>& scheduler_options, const pb::object& config, const std::vector<std::string>& set,
         int first_index) -> pb::object {
        cfr::py::ConfigSource src = config_source(config, set);
        if (pb::isinstance<Game>(game)) {
          const auto g = game.cast<std::shared_ptr<Game>>();
          src.game = g->name();
          if (g->name() == cfr::lc::State::kName) src.rules = g->rules();
        } else if (pb::isinstance<pb::str>(game)) {
          src.game = game.cast<std::string>();
        } else if (!game.is_none()) {
          throw cfr::InputError("traverse: game must be a cfr.Game, a registered game's name, or None (the config's)");
        }
        const cfr::Config c = cfr::py::traverse_config(src);
        const cfr::py::TraverseNetworks shape = cfr::py::traverse_networks(c);
        const auto n_nets = static_cast<pb::ssize_t>(shape.names.size());
        const bool stop_on_nonfinite = c.optimization.nonfinite_policy == "stop";
        // One evaluator per network: a callable or a built-in name for all, or a sequence of them.
        std::vector<pb::object> given;
        if (pb::isinstance<pb::str>(evaluator) || PyCallable_Check(evaluator.ptr())) {
          given.assign(static_cast<std::size_t>(n_nets), evaluator);
        } else if (pb::isinstance<pb::sequence>(evaluator)) {
          const auto seq = evaluator.cast<pb::sequence>();
          if (static_cast<pb::ssize_t>(seq.size()) != n_nets)
            throw cfr::InputError(fmt::format("traverse: {} evaluators given; the traversals query {} networks ({})", seq.size(),
                                              n_nets, fmt::join(shape.names, ", ")));
          for (const auto& e : seq) given.push_back(pb::reinterpret_borrow<pb::object>(e));
        } else {
          throw cfr::InputError(
              "traverse: evaluator must be a callable(inputs, legal_mask, net), a built-in name "
              "(uniform, hash), or a sequence of one per network");
        }
        std::vector<std::unique_ptr<cfr::Evaluator>> owned;
        std::vector<cfr::py::PyEvaluator*> python;
        std::vector<cfr::Evaluator*> nets;
        for (pb::ssize_t k = 0; k < n_nets; ++k) {
          const pb::object& e = given[static_cast<std::size_t>(k)];
          const int net = static_cast<int>(k);
          if (pb::isinstance<pb::str>(e)) {
            owned.push_back(cfr::py::make_builtin_evaluator(e.cast<std::string>(), net, shape.input_width, shape.output_width));
          } else if (PyCallable_Check(e.ptr())) {
            auto pe = std::make_unique<cfr::py::PyEvaluator>(e, net, shape.names[static_cast<std::size_t>(k)], shape.input_width,
                                                             shape.output_width, stop_on_nonfinite);
            python.push_back(pe.get());
            owned.push_back(std::move(pe));
          } else {
            throw cfr::InputError(fmt::format("traverse: evaluator {} must be a callable or a built-in name (uniform, hash)", k));
          }
          nets.push_back(owned.back().get());
        }
        const cfr::py::TraverseJob job{.traversals = traversals,
                                       .iteration = iteration,
                                       .traverser = traverser,
                                       .seed = seed,
                                       .first_index = first_index,
                                       .scheduler = scheduler,
                                       .scheduler_options = scheduler_options};
        cfr::py::TraverseResult r;
        try {
          pb::gil_scoped_release release;
          r = cfr::py::run_traversals(c, job, nets);
        } catch (...) {
          for (auto* p : python) p->rethrow();
          throw;
        }
        pb::dict stats;
        stats["traversals"] = r.stats.traversals;
        stats["nodes"] = r.stats.nodes;
        stats["cutoffs"] = r.stats.cutoffs;
        stats["seconds"] = r.stats.seconds;
        stats["nodes_per_second"] = r.stats.nodes_per_second();
        stats["forwards"] = r.stats.batch.forwards;
        stats["requests"] = r.stats.batch.requests;
        stats["mean_batch"] = r.stats.batch.mean_batch();
        stats["evaluate_seconds"] = r.stats.batch.evaluate_seconds;
        pb::dict per_net;
        for (pb::ssize_t k = 0; k < n_nets; ++k) {
          pb::dict d;
          const auto* pe = dynamic_cast<const cfr::py::PyEvaluator*>(nets[static_cast<std::size_t>(k)]);
          d["python"] = pe != nullptr;
          if (pe != nullptr) {
            d["calls"] = pe->stats().calls;
            d["rows"] = pe->stats().rows;
            d["seconds"] = pe->stats().seconds;
            d["nonfinite_outputs"] = pe->stats().nonfinite;
          }
          per_net[pb::str(shape.names[static_cast<std::size_t>(k)])] = d;
        }
        stats["networks"] = per_net;
        stats["digest_advantage"] = fmt::format("{:016x}", r.digest_advantage);
        stats["digest_strategy"] = fmt::format("{:016x}", r.digest_strategy);
        stats["game"] = c.run.game;
        stats["iteration"] = r.iteration;
        stats["traverser"] = r.traverser;
        stats["seed"] = r.seed;
        stats["scheduler"] = r.scheduler;
        stats["scheduler_options"] = r.scheduler_options;
        const bool linear = c.weighting_mode == "lcfr";
        return traversals_type()(samples_of(r.advantage, linear), samples_of(r.strategy, linear), stats);
      },
      pb::arg("game"), pb::arg("evaluator"), pb::arg("traversals") = pb::none(), pb::arg("iteration") = 1,
      pb::arg("traverser") = 0, pb::arg("seed") = pb::none(), pb::arg("scheduler") = pb::none(),
      pb::arg("scheduler_options") = std::map<std::string, int>{}, pb::arg("config") = pb::none(),
      pb::arg("set") = std::vector<std::string>{}, pb::arg("first_index") = 0,
      R"doc(One phase of Deep CFR traversals, as cfr-run runs them, with the networks answered by `evaluator`;
returns a cfr.Traversals (advantage and strategy cfr.Samples as NumPy arrays, stats).

The C++ engine runs the traversal coroutines and batches their network queries through the
scheduler; each batch of one network's queries is one call

    evaluator(inputs, legal_mask, net) -> outputs

inputs (B, W) float32 (information-state encodings), legal_mask (B, A) bool, net the network
queried (0 advantage0 and 1 advantage1: regrets, regret-matched; 2 strategy: logits, softmaxed
over the legal actions); outputs (B, A) float32 (a NumPy array, or anything np.asarray makes one
of, such as a CPU torch tensor computed under torch.no_grad()). Another dtype or shape raises
InputError naming the network; non-finite outputs are replaced by 0 and counted
(stats["networks"]) unless optimization.nonfinite_policy = "stop" (then InputError). An exception
the callable raises stops the traversals and is raised here. evaluator may also be "uniform" or
"hash" (the engine's stand-ins, row-pure), or a sequence of one evaluator per network.

game: a cfr.Game (its name and rules), a registered name, or None (the config's run.game).
config: None (cfr-run's defaults), a dict of sections or a TOML path, with `set` overrides
("section.key=value"): its [traversal] options (algorithm, epsilon, node cap, opponent policy,
cut-off value), [regret_matching], the encoding, the scheduler and its options are cfr-run's.
traversals (default traversal.traversals_per_player), iteration, traverser (0 or 1), seed (default
run.seed): traversal j draws from derive_seed(seed, iteration, traverser, first_index + j), as in
cfr-run's phase. scheduler (default traversal.scheduler) and scheduler_options ({"window": 64,
"max_batch": 128}) change only how queries are batched: with a row-pure evaluator the samples are
identical whatever they are. The GIL is released while C++ traverses and taken for each call.)doc");

  m.def(
      "evaluate_builtin",
      [](const std::string& name, const pb::array_t<float, pb::array::c_style | pb::array::forcecast>& inputs,
         const pb::array_t<bool, pb::array::c_style | pb::array::forcecast>& legal_mask, int net) {
        if (inputs.ndim() != 2 || legal_mask.ndim() != 2 || inputs.shape(0) != legal_mask.shape(0) || inputs.shape(0) < 1)
          throw cfr::InputError("evaluate_builtin: inputs (B, W) and legal_mask (B, A) with the same B >= 1");
        const pb::ssize_t n = inputs.shape(0), w = inputs.shape(1), a = legal_mask.shape(1);
        if (a > cfr::kMaxActionsAnyGame) throw cfr::InputError(fmt::format("evaluate_builtin: {} actions is too many", a));
        auto e = cfr::py::make_builtin_evaluator(name, net, static_cast<int>(w), static_cast<int>(a));
        std::vector<cfr::ActionMask> masks(static_cast<std::size_t>(n), 0);
        for (pb::ssize_t i = 0; i < n; ++i)
          for (pb::ssize_t j = 0; j < a; ++j)
            if (legal_mask.data()[i * a + j]) masks[static_cast<std::size_t>(i)] |= cfr::ActionMask{1} << j;
        pb::array_t<float> out({n, a});
        e->evaluate(std::span<const float>(inputs.data(), static_cast<std::size_t>(n * w)), masks,
                    std::span<float>(out.mutable_data(), static_cast<std::size_t>(n * a)));
        return out;
      },
      pb::arg("name"), pb::arg("inputs"), pb::arg("legal_mask"), pb::arg("net"),
      "What the built-in stand-in evaluator `name` (\"uniform\": zeros; \"hash\": outputs in [-1, 1) hashed from each "
      "input row's bits, seeded by net) returns for a batch, as cfr.traverse queries it: float32 (B, A). A Python "
      "evaluator returning this gives exactly the samples of evaluator=name.");
  m.def(
      "match",
      [](const pb::object& p0, const pb::object& p1, int games, std::uint64_t seed, const pb::object& rules, bool duplicate,
         int max_steps, int parallel) {
        if (games < 1) throw cfr::InputError(fmt::format("match: games must be at least 1, got {}", games));
        if (max_steps < 1) throw cfr::InputError(fmt::format("match: max_steps must be at least 1, got {}", max_steps));
        if (parallel < 1) throw cfr::InputError(fmt::format("match: parallel must be at least 1, got {}", parallel));
        auto game = std::make_shared<Game>("lost_cities", rules_text(rules));
        std::array<std::shared_ptr<cp::SpecPlayer>, 2> named;
        std::array<std::unique_ptr<PyPlayer>, 2> callables;
        std::array<cfr::lc::MatchPlayer, 2> players;
        const std::array<const pb::object*, 2> given{&p0, &p1};
        for (int i = 0; i < 2; ++i) {
          if (pb::isinstance<PyLoadedPlayer>(*given[i])) {
            named[i] = given[i]->cast<const PyLoadedPlayer&>().p;
            if (!(named[i]->rules == game->rules()))
              throw cfr::InputError(
                  fmt::format("match: p{} '{}' was made for other rules than the match's (load it with "
                              "cfr.load_player(spec, game) for these rules)",
                              i, named[i]->spec));
            players[i] = named[i]->player.player();
          } else if (pb::isinstance<pb::str>(*given[i])) {
            const auto spec = given[i]->cast<std::string>();
            pb::gil_scoped_release release;
            named[i] = cp::load_spec_player(spec, game->rules());  // cfr-arena's factory: checkpoint:, search:, ...
            players[i] = named[i]->player.player();
          } else if (PyCallable_Check(given[i]->ptr())) {
            callables[i] = std::make_unique<PyPlayer>(*given[i], game);
            players[i] = {.batch = callables[i].get()};
          } else {
            throw cfr::InputError(fmt::format("match: p{} must be a player's name or spec, a cfr.Player or a callable", i));
          }
        }
        if (named[0] && named[0] == named[1] && named[0]->spec.rfind("external:", 0) == 0)
          throw cfr::InputError("match: one external player cannot play both sides; load it twice");
        const cfr::lc::MatchOptions opts{
            .games = games, .seed = seed, .max_steps = max_steps, .rules = game->rules(), .duplicate = duplicate};
        std::string json;
        try {
          pb::gil_scoped_release release;
          std::unique_lock<std::mutex> lock0, lock1;  // one caller plays a cfr.Player at a time
          if (named[0]) lock0 = std::unique_lock(named[0]->mu);
          if (named[1] && named[1] != named[0]) lock1 = std::unique_lock(named[1]->mu);
          json = cfr::lc::report_json(cfr::lc::run_match_players(players[0], players[1], opts, parallel));
        } catch (...) {
          for (auto& c : callables)
            if (c) c->rethrow();
          throw;
        }
        return pb::module_::import("json").attr("loads")(json);
      },
      pb::arg("p0"), pb::arg("p1"), pb::arg("games") = 1000, pb::arg("seed") = 0, pb::arg("rules") = pb::none(),
      pb::arg("duplicate") = true, pb::arg("max_steps") = 10000, pb::arg("parallel") = 256,
      R"doc(A Lost Cities match, as cfr-arena plays it: duplicate deals by default (each deal twice,
seats swapped), the 10,000-action cap, seeds as cfr-arena's --seed. Returns cfr-arena --json's
report as a dict, from p0's side.

A player is a name or spec (bot_names(), "checkpoint:PATH", "search:PATH?k=3&n=8", external:COMMAND,
as cfr-arena's --bot0), a cfr.Player (load_player), both played inside C++ as cfr-arena plays them
(a network decides all its pending games in one forward per round), or a Python callable: up to `parallel` games
run in lockstep and the callable is called with a PlayerViews batch of the games where it is to
move (observation (k, W) float32, legal_mask (k, A) bool, states: k cfr.State copies, games: (k,)
match game indices) and returns k legal actions. Its name in the report is its `name` attribute or
__name__. Its exceptions stop the match and propagate. The GIL is released while C++ plays.)doc");
}
