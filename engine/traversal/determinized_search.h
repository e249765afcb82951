#pragma once
// Determinized search over a policy network with value leaves, generic over the game (every
// engine state has resample_hidden): the one home of the search's rule, used by the search player
// (apps/players/search_player.cc: `search:CHECKPOINT?k=..&n=..`, its rollouts coroutines batched by
// a scheduler across every pending game) and by MMD's search teacher (engine/traversal/mmd.h:
// mmd.teacher = "search", expert iteration: the search's move becomes the policy's target).
//
// At a decision of player `me` whose network probabilities are `probs`:
//   1. the candidates are the k most probable legal moves (ties: the lower id first);
//   2. n deals consistent with what `me` has seen are drawn (resample_hidden), the same deals for
//      every candidate;
//   3. each candidate is applied on each deal and the game continues with the network playing both
//      sides (sampled from its softmax, or greedy) for `depth` moves (0: to the end or `cap`), then
//      the value network values the state reached (from the mover's seat, times value_scale: the
//      game's return units), or the return as it stands when the game ended or the cap was hit;
//   4. a candidate's value is its mean over the deals plus prior × its network probability; the
//      search's move is the best (ties: the more probable candidate). With z > 0 a candidate other
//      than the network's first must also pass a paired test: its mean difference from the first
//      over the same deals, mean_j(v_c,j − v_0,j), above z standard errors of that mean (the deals
//      are common to every candidate, so the test sees through the deals' own spread).
//
// determinized_search() runs steps 2–4 for one decision in lockstep: every step of the k·n
// rollouts is one forward of the policy (and one of the value network at the leaves) through
// SearchNets, so its batches, and so its result, depend only on the decision and the seed. Its
// buffers are thread-local and reused: after the first search of a thread, no allocation.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "engine/core/game.h"
#include "engine/core/rng.h"
#include "engine/traversal/traversal.h"

namespace cfr {

inline constexpr int kMaxSearchCandidates = 16;

struct SearchSettings {
  int top_k = 3;             // candidates
  int deals = 16;            // determinizations, the same for every candidate
  int depth = 4;             // moves before the value leaf (0: play to the end or `cap`)
  int cap = 200;             // moves of a rollout at most, then the return as it stands
  double prior = 5.0;        // bonus per unit of network probability (the game's return units)
  bool sampled = true;       // rollouts sample the softmax (false: argmax, lowest id on ties)
  double value_scale = 1.0;  // the value network's output × value_scale = the game's return units
  double z = 0.0;            // the paired test's standard errors an override needs (0: none)
  double win_reward = 0.0;   // a finished rollout's value is win_shaped(return, win_reward), as V's targets were
};

/// A return shaped as mmd.win_reward shapes it (engine/traversal/mmd.h): w more for a win, w less
/// for a loss, a tie unchanged. A search over a value network trained so values the rollouts that
/// finish the same way, so that the leaves it values and those it scores compare alike.
constexpr double win_shaped(double r, double w) noexcept { return r + w * static_cast<double>((r > 0) - (r < 0)); }

/// The networks a search asks, as batches of rows: network 0 the policy (logits over the
/// actions), network 1 the value (one output: the return of the player to move / value_scale).
class SearchNets {
 public:
  virtual ~SearchNets() = default;
  virtual void forward(int net, std::span<const float> inputs, std::span<const ActionMask> legal, std::span<float> outputs) = 0;
};

/// Step 1: the k most probable legal actions by `probs`, ties to the lower id, into `out`;
/// returns how many (≥ 1 when legal ≠ 0).
inline int search_candidates(const float* probs, ActionMask legal, int k, std::array<int, kMaxSearchCandidates>& out) {
  std::array<int, kMaxTraversalActions> ids{};
  int n = 0;
  for (ActionMask m = legal; m != 0; m &= m - 1) ids[static_cast<std::size_t>(n++)] = std::countr_zero(m);
  std::stable_sort(ids.begin(), ids.begin() + n, [&](int a, int b) { return probs[a] > probs[b]; });
  n = std::min({n, k, kMaxSearchCandidates});
  std::copy_n(ids.begin(), n, out.begin());
  return n;
}

/// The candidates' values over the deals, kept for step 4: their sums, and the sums of squares
/// of their paired differences from candidate 0 (the network's first) deal by deal.
struct SearchTally {
  std::array<double, kMaxSearchCandidates> sum{};
  std::array<double, kMaxSearchCandidates> diff_sq{};
  int deals = 0;

  /// One deal: values[c] is candidate c's value on it, c < values.size().
  void add_deal(std::span<const double> values) {
    for (std::size_t c = 0; c < values.size(); ++c) {
      sum[c] += values[c];
      const double d = values[c] - values[0];
      diff_sq[c] += d * d;
    }
    ++deals;
  }
  double mean(std::size_t c) const { return deals > 0 ? sum[c] / deals : 0.0; }
  /// Candidate c's mean paired difference from candidate 0, in standard errors of that mean
  /// (+inf when every deal gives the same positive difference, 0 for candidate 0 or one deal).
  double paired_z(std::size_t c) const {
    if (c == 0 || deals < 2) return 0.0;
    const double n = deals, d = (sum[c] - sum[0]) / n;
    const double var = std::max(0.0, (diff_sq[c] / n - d * d) * n / (n - 1));
    if (var == 0.0)
      return d > 0 ? std::numeric_limits<double>::infinity() : (d < 0 ? -std::numeric_limits<double>::infinity() : 0.0);
    return d / std::sqrt(var / n);
  }
};

/// Step 4: the index of the best candidate by its mean + prior × probs[candidate c] (strictly
/// better replaces: ties keep the more probable), among candidate 0 and those whose paired_z
/// exceeds z (every one when z = 0).
inline int search_choice(const SearchTally& t, std::span<const int> candidates, const float* probs, double prior, double z) {
  int best = 0;
  double best_value = -1e300;
  for (std::size_t c = 0; c < candidates.size(); ++c) {
    if (z > 0 && c > 0 && !(t.paired_z(c) > z)) continue;
    const double v = t.mean(c) + prior * probs[candidates[c]];
    if (v > best_value) {
      best_value = v;
      best = static_cast<int>(c);
    }
  }
  return best;
}

/// What one determinized_search did (for a caller's cost and override counts).
struct SearchResult {
  int action = -1;                                    // the search's move
  int candidates = 0;                                 // how many were compared (1: no search, the network's move)
  std::array<int, kMaxSearchCandidates> candidate{};  // the candidates, most probable first
  std::array<double, kMaxSearchCandidates> value{};   // their mean values over the deals (no prior)
  std::int64_t moves = 0;                             // rollout moves played
  std::int64_t forwards = 0;
};

/// Steps 1–4 at `root` (player `me` to move, `probs` its network's probabilities over the legal
/// moves): deal j is resampled from derive_seed(seed, 0, j), its rollouts draw from
/// derive_seed(seed, 1, j) for every candidate (common random numbers). G is a traversal game
/// adapter (engine/traversal/traversal.h: encode, apply, input_width, num_actions).
template <class G>
SearchResult determinized_search(const G& game, const typename G::State& root, int me, const float* probs,
                                 const SearchSettings& o, std::uint64_t seed, SearchNets& nets) {
  using State = typename G::State;
  const ActionMask root_legal = root.legal_mask();
  std::array<int, kMaxSearchCandidates> cand{};
  const int k = search_candidates(probs, root_legal, o.top_k, cand);
  SearchResult result{.action = cand[0], .candidates = k, .candidate = cand};
  if (k < 2) return result;
  const int A = game.num_actions(), W = game.input_width();
  const auto rows = static_cast<std::size_t>(k) * static_cast<std::size_t>(o.deals);
  thread_local std::vector<State> states;
  thread_local std::vector<Rng> rngs;
  thread_local std::vector<float> in, out;
  std::array<float, kMaxTraversalActions> probs_row{};
  thread_local std::vector<ActionMask> legal;
  thread_local std::vector<std::uint32_t> live;
  thread_local std::vector<double> values;  // row r = deal r / k, candidate r % k
  states.clear();
  rngs.clear();
  for (int j = 0; j < o.deals; ++j) {
    State deal = root;
    Rng deal_rng(derive_seed(seed, 0, static_cast<std::uint64_t>(j)));
    deal.resample_hidden(me, deal_rng);
    for (int c = 0; c < k; ++c) {
      states.push_back(deal);
      rngs.emplace_back(derive_seed(seed, 1, static_cast<std::uint64_t>(j)));
      game.apply(states.back(), cand[static_cast<std::size_t>(c)], rngs.back());
    }
  }
  in.resize(rows * static_cast<std::size_t>(W));
  out.resize(rows * static_cast<std::size_t>(A));
  legal.resize(rows);
  live.resize(rows);
  const int stop = o.depth > 0 ? std::min(o.depth, o.cap) : o.cap;
  for (int step = 0; step < stop; ++step) {
    std::size_t n = 0;
    for (std::size_t r = 0; r < rows; ++r) {
      const State& s = states[r];
      if (s.is_terminal()) continue;
      game.encode(s, s.current_player(), in.data() + n * static_cast<std::size_t>(W));
      legal[n] = s.legal_mask();
      live[n++] = static_cast<std::uint32_t>(r);
    }
    if (n == 0) break;
    nets.forward(0, std::span(in.data(), n * static_cast<std::size_t>(W)), std::span(legal.data(), n),
                 std::span(out.data(), n * static_cast<std::size_t>(A)));
    ++result.forwards;
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t r = live[i];
      const float* logits = out.data() + i * static_cast<std::size_t>(A);
      int a;
      if (o.sampled) {
        masked_softmax(logits, legal[i], A, probs_row.data());
        a = sample_action(probs_row.data(), legal[i], rngs[r]);
      } else {
        a = greedy_action(logits, legal[i]);
      }
      game.apply(states[r], a, rngs[r]);
      ++result.moves;
    }
  }
  values.assign(rows, 0.0);
  std::size_t n = 0;  // the leaves: rollouts stopped at their depth before the end and the cap
  for (std::size_t r = 0; r < rows; ++r) {
    const State& s = states[r];
    if (o.depth > 0 && o.depth < o.cap && !s.is_terminal()) {
      game.encode(s, s.current_player(), in.data() + n * static_cast<std::size_t>(W));
      legal[n] = s.legal_mask();
      live[n++] = static_cast<std::uint32_t>(r);
    } else {
      values[r] = win_shaped(s.returns(me), o.win_reward);
    }
  }
  if (n > 0) {
    nets.forward(1, std::span(in.data(), n * static_cast<std::size_t>(W)), std::span(legal.data(), n), std::span(out.data(), n));
    ++result.forwards;
    for (std::size_t i = 0; i < n; ++i) {
      const State& s = states[live[i]];
      const double v = static_cast<double>(out[i]) * o.value_scale;
      values[live[i]] = s.current_player() == me ? v : -v;  // zero-sum
    }
  }
  SearchTally tally;
  for (std::size_t r = 0; r < rows; r += static_cast<std::size_t>(k))
    tally.add_deal(std::span<const double>(values.data() + r, static_cast<std::size_t>(k)));
  for (int c = 0; c < k; ++c) result.value[static_cast<std::size_t>(c)] = tally.mean(static_cast<std::size_t>(c));
  result.action = cand[static_cast<std::size_t>(
      search_choice(tally, std::span<const int>(cand.data(), static_cast<std::size_t>(k)), probs, o.prior, o.z))];
  return result;
}

/// The search's improved policy at a decision (MMD's search_target = "improved"): out[a] ∝
/// probs[a]·exp((q(a) − q̄)/temperature) over the legal actions, q(a) the candidates' values
/// (`r`), 0 in the exponent for the others, q̄ the candidates' probs-weighted mean value. Where the
/// search finds no difference it is `probs` itself. Writes the A entries of `out` (0 off `legal`).
inline void improved_policy(const float* probs, ActionMask legal, int num_actions, const SearchResult& r, double temperature,
                            float* out) {
  double q_mean = 0, p_sum = 0;
  for (int c = 0; c < r.candidates; ++c) {
    q_mean += probs[r.candidate[static_cast<std::size_t>(c)]] * r.value[static_cast<std::size_t>(c)];
    p_sum += probs[r.candidate[static_cast<std::size_t>(c)]];
  }
  q_mean /= std::max(p_sum, 1e-12);
  std::fill(out, out + num_actions, 0.0F);
  double z = 0;
  for (ActionMask m = legal; m != 0; m &= m - 1) {
    const int a = std::countr_zero(m);
    double w = probs[a];
    for (int c = 0; c < r.candidates; ++c)
      if (r.candidate[static_cast<std::size_t>(c)] == a)
        w *= std::exp((r.value[static_cast<std::size_t>(c)] - q_mean) / temperature);
    out[a] = static_cast<float>(w);
    z += w;
  }
  if (z > 0)
    for (int a = 0; a < num_actions; ++a) out[a] = static_cast<float>(out[a] / z);
}

}  // namespace cfr
