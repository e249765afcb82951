#pragma once
// What one player has seen its opponent do in a Lost Cities game, and the opponent's past decision
// states rebuilt for a deal of the present: the search player's belief (apps/players/search_player.h,
// `belief=L`) weighs each deal by how likely the opponent's policy makes the moves it was seen to make.
//
// Only what the watcher saw is used: the card the opponent played or discarded (never its hand
// slot, an artefact of the engine's hand order), where it drew from, which of its cards were known
// (taken face up from a pile), the public table, and the watcher's own hand. Going back from the
// deal's opponent hand, a card the opponent took from a pile leaves the hand at that draw, a card
// it drew from the deck is one of its unknown cards then, drawn uniformly, and a card it played
// comes back. Every hand so rebuilt is consistent with everything the watcher saw; the deals of the
// present are uniform over the information set (State::resample_hidden), so the rebuilt histories
// are a sample of the histories consistent with it.
#include <cstdint>
#include <span>
#include <vector>

#include "engine/core/game.h"
#include "engine/core/rng.h"
#include "engine/games/lost_cities.h"

namespace cfr::lc {

/// One of the opponent's past decisions, rebuilt: its state with the opponent to move (its unknown
/// hand cards those of one history consistent with the deal) and the actions that make the move it
/// was seen to make there (play or discard a card: every slot that holds it; a draw: one action).
struct PastDecision {
  State state;
  ActionMask seen = 0;
};

class OpponentTurns {
 public:
  /// A new game, watched from `seat`.
  void reset(int seat) {
    seat_ = seat;
    moves_.clear();
  }
  int seat() const noexcept { return seat_; }
  /// Number of the opponent's moves recorded (two a turn: its card, then its draw).
  int moves() const noexcept { return static_cast<int>(moves_.size()); }

  /// Any move of the game, before it is applied to `before` (BatchBot::move_made); the watcher's
  /// own moves are ignored. The true state is kept for the table and the watcher's hand; the
  /// opponent's unknown cards in it are never read (rebuild overwrites them).
  void record(const State& before, int action);

  /// For `deal`, a state of the watcher's information set now (the same table as the game's
  /// latest state), the opponent's last `max_moves` recorded moves rebuilt, the most recent first,
  /// into `out` (cleared first). False (out cleared) when `deal` does not continue the recorded
  /// moves: it is not the watcher's decision, or the opponent's cards cannot be traced back.
  bool rebuild(const State& deal, int max_moves, Rng& rng, std::vector<PastDecision>& out) const;

 private:
  struct Move {
    State before;  // the opponent to move
    Card card{};   // the card played or discarded, or taken from a pile
    bool draw = false;
    bool from_deck = false;
    bool discard = false;
    int action = 0;  // a draw's action (card moves are matched by card: the slot is not seen)
    std::uint8_t known_after_count = 0;
    std::array<Card, kMaxHandSize> known_after{};  // the opponent's known cards after the move
  };
  int seat_ = 0;
  std::vector<Move> moves_;
};

}  // namespace cfr::lc
