#pragma once
// Deep CFR traversals as coroutines (deep-cfr.md §2), generic over the game.
//
// outcome_sampling(ctx, game, opts): one sampled trajectory. Down the path, every decision asks a
// network (co_await, the traversal suspends); at traverser nodes it stores a strategy sample
// (σ) and opens an advantage sample; at the leaf (terminal or node cap) the value climbs back up
// the recorded steps: q̃ = max(q(a), floor), ṽ = clip(v/q̃, ±clip), u = σ(a)·ṽ, target[a] = ṽ − u,
// other legal actions 0 (or −u). The loop is iterative: native stack and frame use do not grow
// with trajectory length (only ctx.path does).
//
// external_sampling(ctx, game, opts): for small games. Traverser nodes expand every legal action
// (target = v(a) − Σ σ(b)v(b)); opponent nodes sample one action from their current σ (their own
// advantage network) and store it as a strategy sample; chance is sampled. Recursion by awaiting
// child Tasks (symmetric transfer: no native stack growth).
//
// A game adapter G provides: State, num_actions(), input_width(), new_game(Rng&) → State (every
// chance event up to the first decision resolved), encode(state, player, float*),
// apply(state, action, Rng&) (resolving the chance that follows), and optionally
// bot_action(state, Rng&) for opponent_policy = bot.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <string_view>

#include "engine/core/errors.h"
#include "engine/core/game.h"
#include "engine/core/task.h"
#include "engine/traversal/traversal_context.h"

namespace cfr {

/// Deep CFR's network set, as its traversals query it: one advantage network per player and the
/// strategy network (the algorithm declares their widths: apps/algorithms/deep_cfr).
enum NetId : int { kAdvantageNet0 = 0, kAdvantageNet1 = 1, kStrategyNet = 2, kNumNets = 3 };
constexpr int advantage_net(int player) noexcept { return player == 0 ? kAdvantageNet0 : kAdvantageNet1; }

inline constexpr int kMaxTraversalActions = 64;

enum class UnsampledRegret { kZero, kNegativeNodeValue };
/// The value of a traversal cut off by the node cap: the current score difference, 0, or the
/// score difference at the end of a rollout in which the game's bot plays both sides (games with
/// bots: Lost Cities, traversal.opponent_bot) for at most kMaxRolloutActions actions.
enum class CutoffValue { kScoreDiff, kZero, kBotRollout };
inline constexpr int kMaxRolloutActions = 10000;
enum class OpponentPolicy { kAverageStrategy, kNetwork, kBot };
enum class RmFallback { kArgmax, kUniform };
enum class TraversalKind { kOutcomeSampling, kExternalSampling };

struct TraversalOptions {
  TraversalKind kind = TraversalKind::kOutcomeSampling;
  double epsilon = 0.05;      // outcome_sampling_epsilon
  double prob_floor = 1e-4;   // q̃ = max(q(a), prob_floor)
  double value_clip = 500.0;  // ṽ clipped to ±value_clip (0 = no clip)
  UnsampledRegret unsampled = UnsampledRegret::kZero;
  int max_nodes = 1000;  // node cap per traversal (0 = none)
  CutoffValue cutoff = CutoffValue::kScoreDiff;
  OpponentPolicy opponent = OpponentPolicy::kAverageStrategy;
  RmFallback fallback = RmFallback::kArgmax;
  double rm_epsilon = 1e-4;  // regret sums at or below this use the fallback
};

/// Regret matching over the legal entries of `adv` into sigma (zeros elsewhere).
inline void regret_matching(const float* adv, ActionMask legal, int n, RmFallback fallback, double eps, float* sigma) {
  double sum = 0;
  for (int a = 0; a < n; ++a) {
    const double x = mask_has(legal, a) ? std::max(0.0F, adv[a]) : 0.0F;
    sigma[a] = static_cast<float>(x);
    sum += x;
  }
  if (sum > eps) {
    const float inv = static_cast<float>(1.0 / sum);
    for (int a = 0; a < n; ++a) sigma[a] *= inv;
    return;
  }
  for (int a = 0; a < n; ++a) sigma[a] = 0.0F;
  if (fallback == RmFallback::kUniform) {
    const float u = 1.0F / static_cast<float>(mask_count(legal));
    for (ActionMask m = legal; m != 0; m &= m - 1) sigma[std::countr_zero(m)] = u;
  } else {
    int best = std::countr_zero(legal);
    for (ActionMask m = legal; m != 0; m &= m - 1) {
      const int a = std::countr_zero(m);
      if (adv[a] > adv[best]) best = a;  // ties → the lowest id
    }
    sigma[best] = 1.0F;
  }
}

/// Softmax over the legal logits into probs (zeros elsewhere).
inline void masked_softmax(const float* logits, ActionMask legal, int n, float* probs) {
  float mx = -std::numeric_limits<float>::infinity();
  for (ActionMask m = legal; m != 0; m &= m - 1) mx = std::max(mx, logits[std::countr_zero(m)]);
  double sum = 0;
  for (int a = 0; a < n; ++a) {
    probs[a] = mask_has(legal, a) ? std::exp(logits[a] - mx) : 0.0F;
    sum += probs[a];
  }
  const float inv = static_cast<float>(1.0 / sum);
  for (int a = 0; a < n; ++a) probs[a] *= inv;
}

/// The legal action of the largest logit, the lowest id on ties (greedy play of a policy network).
inline int greedy_action(const float* logits, ActionMask legal) {
  int best = std::countr_zero(legal);
  for (ActionMask m = legal; m != 0; m &= m - 1) {
    const int a = std::countr_zero(m);
    if (logits[a] > logits[best]) best = a;
  }
  return best;
}

/// Samples an action from probs (legal entries, in id order) with one uniform draw.
inline int sample_action(const float* probs, ActionMask legal, Rng& rng) {
  double u = rng.uniform();
  int last = -1;
  for (ActionMask m = legal; m != 0; m &= m - 1) {
    const int a = std::countr_zero(m);
    if (probs[a] <= 0.0F) continue;
    last = a;
    if (u < probs[a]) return a;
    u -= probs[a];
  }
  return last >= 0 ? last : std::countr_zero(legal);  // rounding left u just above the total
}

/// probs = (1 − eps)·sigma + eps·uniform over the legal actions (zeros elsewhere).
inline void mix_with_uniform(const float* sigma, ActionMask legal, int n, double eps, float* probs) {
  const float unif = 1.0F / static_cast<float>(mask_count(legal));
  for (int b = 0; b < n; ++b) probs[b] = mask_has(legal, b) ? static_cast<float>((1.0 - eps) * sigma[b] + eps * unif) : 0.0F;
}

/// The worth for `player` of a trajectory cut off by the node cap at s (CutoffValue); a bot
/// rollout plays s on to the end first.
template <class G>
double cutoff_value(TraversalContext& ctx, const G& game, CutoffValue mode, typename G::State& s, int player) {
  if (mode == CutoffValue::kBotRollout) {
    if constexpr (requires(const G& g, const typename G::State& st, Rng& r) { g.bot_action(st, r); }) {
      for (int step = 0; step < kMaxRolloutActions && !s.is_terminal(); ++step)
        game.apply(s, game.bot_action(s, ctx.rng), ctx.rng);
    } else {
      throw InputError("cutoff_value_mode = bot_rollout needs a game with bots (lost_cities)");
    }
  }
  return mode == CutoffValue::kZero ? 0.0 : s.returns(player);
}

template <class G>
Task<void> outcome_sampling(TraversalContext& ctx, const G& game, const TraversalOptions& o) {
  const int A = game.num_actions();
  const int traverser = ctx.traverser;
  float out[kMaxTraversalActions];
  float probs[kMaxTraversalActions];
  auto s = game.new_game(ctx.rng);
  double value = 0;
  int nodes = 0;
  for (;;) {
    if (o.max_nodes > 0 && nodes >= o.max_nodes) {
      value = cutoff_value(ctx, game, o.cutoff, s, traverser);
      ctx.cut_off = true;
      break;
    }
    if (s.is_terminal()) {
      value = s.returns(traverser);
      break;
    }
    ++nodes;
    const int p = s.current_player();
    const ActionMask legal = s.legal_mask();
    int a;
    if (p == traverser) {
      const int si = ctx.strategy.push(p, ctx.iteration, legal);
      game.encode(s, p, ctx.strategy.input(si));
      co_await ctx.query(advantage_net(p), ctx.strategy.input(si), legal, out);
      float* sigma = ctx.strategy.target(si);
      regret_matching(out, legal, A, o.fallback, o.rm_epsilon, sigma);
      mix_with_uniform(sigma, legal, A, o.epsilon, probs);
      a = sample_action(probs, legal, ctx.rng);
      const int ai = ctx.advantage.push(p, ctx.iteration, legal);
      std::copy_n(ctx.strategy.input(si), ctx.advantage.input_width, ctx.advantage.input(ai));
      ctx.path.push_back({ai, a, sigma[a], probs[a]});
    } else if (o.opponent == OpponentPolicy::kBot) {
      if constexpr (requires(const G& g, const typename G::State& st, Rng& r) { g.bot_action(st, r); }) {
        a = game.bot_action(s, ctx.rng);
      } else {
        throw InputError("opponent_policy = bot needs a game with bots (lost_cities)");
      }
    } else {
      float* in = ctx.scratch_input(game.input_width());
      game.encode(s, p, in);
      if (o.opponent == OpponentPolicy::kAverageStrategy) {
        co_await ctx.query(kStrategyNet, in, legal, out);
        masked_softmax(out, legal, A, probs);
      } else {
        co_await ctx.query(advantage_net(p), in, legal, out);
        regret_matching(out, legal, A, o.fallback, o.rm_epsilon, probs);
      }
      a = sample_action(probs, legal, ctx.rng);
    }
    game.apply(s, a, ctx.rng);
  }
  // Back up the trajectory: only traverser nodes transform the value.
  for (auto it = ctx.path.rbegin(); it != ctx.path.rend(); ++it) {
    const double q = std::max(static_cast<double>(it->q_a), o.prob_floor);
    double v = value / q;
    if (o.value_clip > 0) v = std::clamp(v, -o.value_clip, o.value_clip);
    const double u = it->sigma_a * v;
    float* target = ctx.advantage.target(it->sample);
    const ActionMask legal = ctx.advantage.masks[static_cast<std::size_t>(it->sample)];
    const float other = o.unsampled == UnsampledRegret::kZero ? 0.0F : static_cast<float>(-u);
    for (ActionMask m = legal; m != 0; m &= m - 1) target[std::countr_zero(m)] = other;
    target[it->action] = static_cast<float>(v - u);
    value = u;
  }
  ctx.nodes += nodes;
}

namespace detail {

template <class G>
Task<double> es_node(TraversalContext& ctx, const G& game, const TraversalOptions& o, typename G::State s) {
  const int A = game.num_actions();
  const int traverser = ctx.traverser;
  if (s.is_terminal()) co_return s.returns(traverser);
  ++ctx.nodes;
  const int p = s.current_player();
  const ActionMask legal = s.legal_mask();
  float out[kMaxTraversalActions];
  float sigma[kMaxTraversalActions];
  if (p == traverser) {
    const int ai = ctx.advantage.push(p, ctx.iteration, legal);
    game.encode(s, p, ctx.advantage.input(ai));
    co_await ctx.query(advantage_net(p), ctx.advantage.input(ai), legal, out);
    regret_matching(out, legal, A, o.fallback, o.rm_epsilon, sigma);
    double v[kMaxTraversalActions];
    double u = 0;
    for (ActionMask m = legal; m != 0; m &= m - 1) {
      const int a = std::countr_zero(m);
      auto child = s;
      game.apply(child, a, ctx.rng);
      v[a] = co_await es_node(ctx, game, o, child);
      u += sigma[a] * v[a];
    }
    float* target = ctx.advantage.target(ai);  // the buffer may have grown: index again
    for (ActionMask m = legal; m != 0; m &= m - 1) {
      const int a = std::countr_zero(m);
      target[a] = static_cast<float>(v[a] - u);
    }
    co_return u;
  }
  const int si = ctx.strategy.push(p, ctx.iteration, legal);
  game.encode(s, p, ctx.strategy.input(si));
  co_await ctx.query(advantage_net(p), ctx.strategy.input(si), legal, out);
  regret_matching(out, legal, A, o.fallback, o.rm_epsilon, sigma);
  std::copy_n(sigma, A, ctx.strategy.target(si));
  const int a = sample_action(sigma, legal, ctx.rng);
  game.apply(s, a, ctx.rng);
  co_return co_await es_node(ctx, game, o, s);
}

}  // namespace detail

template <class G>
Task<void> external_sampling(TraversalContext& ctx, const G& game, const TraversalOptions& o) {
  (void)co_await detail::es_node(ctx, game, o, game.new_game(ctx.rng));
}

/// The traversal selected by o.kind.
template <class G>
Task<void> traverse(TraversalContext& ctx, const G& game, const TraversalOptions& o) {
  if (o.kind == TraversalKind::kExternalSampling) return external_sampling(ctx, game, o);
  return outcome_sampling(ctx, game, o);
}

}  // namespace cfr
