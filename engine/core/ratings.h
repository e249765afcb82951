#pragma once
// Ratings from a round robin: a Bradley–Terry model fitted by maximum likelihood (Hunter's MM
// iterations), reported on the Elo scale (400·log10 of the strength ratio) with 95% intervals from
// the observed Fisher information, relative to an anchor player (rating 0). A draw counts as half
// a win for each side. Every pair gets one virtual drawn game (a weak prior) so that a player who
// won or lost everything still has a finite rating; say so beside the numbers.
#include <string>
#include <vector>

namespace cfr {

/// Results of one pair: games, and wins of a over b (draws counted as halves).
struct PairResult {
  int a = 0, b = 0;
  int games = 0;
  double a_score = 0;  // wins + draws / 2 of a
};

struct Rating {
  std::string name;
  double elo = 0;         // relative to the anchor
  double lo = 0, hi = 0;  // 95% interval (the anchor's is [0, 0])
  double score = 0;       // games won + drawn / 2, all opponents
  int games = 0;
};

/// Fits ratings for players 0..n-1 (names[i]) from pair results; `anchor` is rated 0. Throws
/// std::invalid_argument for an index out of range or a pair of a player with itself.
std::vector<Rating> bradley_terry(const std::vector<std::string>& names, const std::vector<PairResult>& pairs, int anchor = 0);

}  // namespace cfr
