#pragma once
// The games of the engine behind one type-erased interface, for the Python module (module.cc):
// a Game is a registered game by name (engine/games/games.h) with its rules; an AnyState is one
// of its states plus what Python needs beyond the engine's state: the history of actions, how
// the state was dealt (a Lost Cities deck order, or a seed) and the resamples applied, so that
// serialize() describes the state exactly and Game::deserialize_state rebuilds it.
//
// Chance, as the engine does it:
//   - Lost Cities has no chance node: the deck order is fixed when the game is dealt (from a seed,
//     State::deal, or from a given deck order, State::from_deck; the order transcripts record).
//   - Kuhn and Leduc (enumerable games) have explicit chance nodes (current_player() == -1,
//     chance_outcomes(), an outcome applied with apply_action). A state made with a seed resolves
//     every chance node it reaches itself, from Rng(seed), exactly as the traversals' adapters do
//     (SmallTraversalGame::resolve_chance): such a state only ever stops at decisions.
//
// Errors: InputError (bad rules, decks, serialized text) and IllegalActionError (an action not
// legal here) carry the engine's messages; the module maps both to Python's ValueError.
// Not thread-safe: one state is used by one thread at a time.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/core/game.h"
#include "engine/games/lost_cities.h"

namespace cfr::py {

/// One resample_hidden applied to a state: at history length `step`, for `player`, from Rng(seed).
struct Resample {
  int step = 0;
  int player = 0;
  std::uint64_t seed = 0;
};

class AnyState {
 public:
  virtual ~AnyState() = default;
  virtual std::unique_ptr<AnyState> clone() const = 0;

  virtual int current_player() const = 0;  // 0, 1, or kChancePlayer (−1); terminal: −4 (OpenSpiel)
  virtual bool is_terminal() const = 0;
  virtual bool is_chance_node() const = 0;
  virtual std::vector<std::pair<int, double>> chance_outcomes() const = 0;  // empty off chance nodes
  virtual ActionMask legal_mask() const = 0;                                // chance nodes: the outcomes' actions
  virtual int num_distinct_actions() const = 0;
  virtual double returns(int player) const = 0;
  virtual int info_state_size() const = 0;
  /// Writes info_state_size() floats: `player`'s view. Precondition: player is 0 or 1.
  virtual void encode(int player, float* out) const = 0;
  /// Applies a legal action (IllegalActionError otherwise, the state unchanged), then resolves
  /// chance nodes when the state was dealt from a seed.
  virtual void apply_action(int action) = 0;
  virtual std::string action_to_string(int action) const = 0;
  virtual std::string observation_string(int player) const = 0;
  virtual std::string information_state_string(int player) const = 0;
  virtual std::string to_string() const = 0;
  /// A copy whose hidden information (for `player`) is redrawn from Rng(seed): the engine's
  /// resample_hidden. The copy records the resample, so that it serializes exactly.
  virtual std::unique_ptr<AnyState> resample_hidden(int player, std::uint64_t seed) const = 0;
  /// One line of JSON (docs/python.md "Serialization"); Lost Cities: a transcript line.
  virtual std::string serialize() const = 0;
  virtual const std::vector<int>& history() const = 0;
  virtual const std::vector<Resample>& resamples() const = 0;
  virtual bool equals(const AnyState& other) const = 0;
  /// Lost Cities: each player's score (State::total); other games: CheckError.
  virtual std::pair<int, int> scores() const = 0;
  /// The Lost Cities state (for its bots), or nullptr for other games.
  virtual const lc::State* lc_state() const { return nullptr; }
};

/// A registered game with its rules (Lost Cities only; the others have none).
class Game {
 public:
  /// InputError for an unknown name (listing the registered games), bad rules, or rules given to
  /// a game that has none. rules_json: a JSON object of rule knobs ("" or "{}": the defaults).
  Game(const std::string& name, const std::string& rules_json);

  const std::string& name() const noexcept { return name_; }
  const lc::Rules& rules() const noexcept { return rules_; }
  bool enumerable() const noexcept { return enumerable_; }
  int num_distinct_actions() const noexcept { return num_actions_; }
  int info_state_size() const noexcept { return info_size_; }
  /// Every rule knob as a JSON object's text ("{}" for games without rules).
  std::string rules_json() const;

  /// A new game: Lost Cities dealt from `seed` (default 0) or from `deck` (public card ids before
  /// dealing, top last); Kuhn/Leduc at their chance root, or, with a seed, with every chance node
  /// resolved from Rng(seed). InputError when both are given, or a deck for a game without one.
  std::unique_ptr<AnyState> new_initial_state(std::optional<std::uint64_t> seed,
                                              const std::optional<std::vector<int>>& deck) const;
  /// The state serialize() described; InputError naming what is wrong.
  std::unique_ptr<AnyState> deserialize_state(const std::string& text) const;

 private:
  std::string name_;
  lc::Rules rules_{};
  bool enumerable_ = false;
  int num_actions_ = 0;
  int info_size_ = 0;
};

/// A Lost Cities state as a match hands it to a player: everything but serialize(), which raises
/// InputError (no deck or history comes with it).
std::unique_ptr<AnyState> wrap_lost_cities_state(const lc::State& s);

/// The registered games' names (engine/games/games.h).
std::vector<std::string> registered_games();

}  // namespace cfr::py
