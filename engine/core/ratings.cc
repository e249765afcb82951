#include "engine/core/ratings.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace cfr {

namespace {

constexpr double kEloPerNat = 400.0 / 2.302585092994046;  // 400 / ln 10
constexpr double kZ95 = 1.959963984540054;
constexpr double kPriorGames = 1.0;  // one virtual drawn game per pair

/// Inverts a symmetric positive-definite matrix (Gauss–Jordan); small n.
std::vector<std::vector<double>> invert(std::vector<std::vector<double>> m) {
  const std::size_t n = m.size();
  std::vector<std::vector<double>> inv(n, std::vector<double>(n, 0.0));
  for (std::size_t i = 0; i < n; ++i) inv[i][i] = 1.0;
  for (std::size_t c = 0; c < n; ++c) {
    std::size_t pivot = c;
    for (std::size_t r = c + 1; r < n; ++r)
      if (std::abs(m[r][c]) > std::abs(m[pivot][c])) pivot = r;
    std::swap(m[c], m[pivot]);
    std::swap(inv[c], inv[pivot]);
    const double d = m[c][c];
    if (std::abs(d) < 1e-300) throw std::invalid_argument("ratings: singular information matrix");
    for (std::size_t k = 0; k < n; ++k) {
      m[c][k] /= d;
      inv[c][k] /= d;
    }
    for (std::size_t r = 0; r < n; ++r) {
      if (r == c) continue;
      const double f = m[r][c];
      if (f == 0) continue;
      for (std::size_t k = 0; k < n; ++k) {
        m[r][k] -= f * m[c][k];
        inv[r][k] -= f * inv[c][k];
      }
    }
  }
  return inv;
}

}  // namespace

std::vector<Rating> bradley_terry(const std::vector<std::string>& names, const std::vector<PairResult>& pairs, int anchor) {
  const int n = static_cast<int>(names.size());
  if (anchor < 0 || anchor >= n) throw std::invalid_argument("ratings: anchor out of range");
  // games[i][j] and score[i][j] (i's score against j), with the prior.
  std::vector<std::vector<double>> games(n, std::vector<double>(n, 0.0)), score = games;
  std::vector<Rating> out(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) out[static_cast<std::size_t>(i)].name = names[static_cast<std::size_t>(i)];
  for (const auto& p : pairs) {
    if (p.a < 0 || p.a >= n || p.b < 0 || p.b >= n || p.a == p.b) throw std::invalid_argument("ratings: bad pair");
    games[p.a][p.b] += p.games;
    games[p.b][p.a] += p.games;
    score[p.a][p.b] += p.a_score;
    score[p.b][p.a] += p.games - p.a_score;
    out[static_cast<std::size_t>(p.a)].score += p.a_score;
    out[static_cast<std::size_t>(p.b)].score += p.games - p.a_score;
    out[static_cast<std::size_t>(p.a)].games += p.games;
    out[static_cast<std::size_t>(p.b)].games += p.games;
  }
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      if (i != j && games[i][j] > 0) {
        games[i][j] += kPriorGames;
        score[i][j] += kPriorGames / 2;
      }
  // MM iterations on strengths p (Hunter 2004), normalised to the anchor.
  std::vector<double> p(static_cast<std::size_t>(n), 1.0);
  for (int it = 0; it < 10000; ++it) {
    double change = 0;
    for (int i = 0; i < n; ++i) {
      double w = 0, denom = 0;
      for (int j = 0; j < n; ++j)
        if (j != i && games[i][j] > 0) {
          w += score[i][j];
          denom += games[i][j] / (p[i] + p[j]);
        }
      if (denom <= 0) continue;  // played nobody
      const double next = w / denom;
      change = std::max(change, std::abs(std::log(next / p[i])));
      p[i] = next;
    }
    const double a = p[anchor];
    for (auto& v : p) v /= a;
    if (change < 1e-10) break;
  }
  // Observed information of θ = ln p without the anchor's coordinate.
  std::vector<int> free;
  for (int i = 0; i < n; ++i)
    if (i != anchor) free.push_back(i);
  std::vector<std::vector<double>> info(free.size(), std::vector<double>(free.size(), 0.0));
  for (std::size_t x = 0; x < free.size(); ++x) {
    const int i = free[x];
    for (int j = 0; j < n; ++j) {
      if (j == i || games[i][j] <= 0) continue;
      const double pij = p[i] / (p[i] + p[j]), v = games[i][j] * pij * (1 - pij);
      info[x][x] += v;
      const auto y = std::find(free.begin(), free.end(), j);
      if (y != free.end()) info[x][static_cast<std::size_t>(y - free.begin())] -= v;
    }
  }
  std::vector<std::vector<double>> cov;
  if (!free.empty()) cov = invert(info);
  for (int i = 0; i < n; ++i) {
    Rating& r = out[static_cast<std::size_t>(i)];
    r.elo = kEloPerNat * std::log(p[i]);
    r.lo = r.hi = r.elo;
    const auto x = std::find(free.begin(), free.end(), i);
    if (x != free.end()) {
      const auto k = static_cast<std::size_t>(x - free.begin());
      const double half = kZ95 * kEloPerNat * std::sqrt(std::max(0.0, cov[k][k]));
      r.lo = r.elo - half;
      r.hi = r.elo + half;
    }
  }
  return out;
}

}  // namespace cfr
