#pragma once
// ESCHER's traversals as coroutines (McAleer, Farina, Lanctot, Sandholm, ICLR 2023), generic over
// the game, on the same contexts, query port and schedulers as Deep CFR's (traversal.h).
//
// ESCHER queries four networks: the regret (advantage) network of each player and the strategy
// network, as Deep CFR does, plus a history value network: its input is the whole history (the
// game's encoding for player 0 followed by the one for player 1, so both private hands), its
// output q̂(h, a) for every action a, the expected return *for player 0* of taking a at h and then
// following the current profile σ^t (regret matching on both regret networks).
//
// escher_value_traversal(ctx, game, o): one trajectory of the current profile, explored: at every
// decision the player to move samples from (1 − ε_v)·σ + ε_v·uniform, and each decision stores a
// value sample (history encoding, target at the sampled action only: mask = that action). Its
// target is the return of the rest of the trajectory (for player 0) or, with importance-weighted
// targets, that return corrected by σ(b)/q(b) for every later decision b (unbiased for the
// unexplored profile; the ratios are clipped to ±value_clip as a value). Samples go to
// ctx.advantage (widths 2·W and A).
//
// escher_regret_traversal(ctx, game, o): one trajectory for traverser i. At i's decisions it asks
// its regret network for σ_i (regret matching), the value network for q̂(h, ·), stores the regret
// sample r(a) = q̂_i(h, a) − Σ_b σ_i(b) q̂_i(h, b) for every legal a (q̂_i: q̂ from i's side) and
// samples its action from a fixed sampling policy (uniform; with sampling_epsilon < 1, mixed with
// σ_i). The opponent samples from its own σ and stores that as a strategy sample. No value climbs
// back up and no importance weight appears: the traverser's sampling reach is the same for every
// history of an information state and every iteration, so it scales each information state's
// regrets by one constant that regret matching ignores. Samples go to ctx.advantage (widths W, A)
// and ctx.strategy.
//
// Both loops are iterative (native stack and frames do not grow with the trajectory).
#include <algorithm>

#include "engine/core/task.h"
#include "engine/traversal/traversal.h"
#include "engine/traversal/traversal_context.h"

namespace cfr {

/// ESCHER's network set in query order: Deep CFR's three (NetId), then the history value network.
inline constexpr int kValueNet = 3;
inline constexpr int kNumEscherNets = 4;

/// What a value sample's target is (see escher_value_traversal).
enum class EscherValueTarget { kReturn, kImportanceWeighted };

struct EscherOptions {
  double sampling_epsilon = 1.0;  // the traverser samples from ε·uniform + (1 − ε)·σ_i (1: uniform, fixed)
  double value_epsilon = 0.05;    // exploration of the value trajectories
  EscherValueTarget value_target = EscherValueTarget::kReturn;
  double value_clip = 500.0;                     // importance-weighted targets clipped to ±this (0 = no clip)
  int max_nodes = 1000;                          // node cap per trajectory (0 = none)
  CutoffValue cutoff = CutoffValue::kScoreDiff;  // a value trajectory's worth at the cap
  RmFallback fallback = RmFallback::kArgmax;
  double rm_epsilon = 1e-4;
};

namespace detail {

/// σ of the player to move at s (regret matching on its regret network); `in` holds the encoding.
template <class G>
Task<void> current_policy(TraversalContext& ctx, const G& game, const EscherOptions& o, const typename G::State& s, int p,
                          ActionMask legal, float* in, float* out, float* sigma) {
  game.encode(s, p, in);
  co_await ctx.query(advantage_net(p), in, legal, out);
  regret_matching(out, legal, game.num_actions(), o.fallback, o.rm_epsilon, sigma);
}

/// The history encoding: player 0's encoding, then player 1's (2 · input_width floats).
template <class G>
void encode_history(const G& game, const typename G::State& s, float* out) {
  game.encode(s, 0, out);
  game.encode(s, 1, out + game.input_width());
}

}  // namespace detail

template <class G>
Task<void> escher_value_traversal(TraversalContext& ctx, const G& game, const EscherOptions& o) {
  const int A = game.num_actions();
  float out[kMaxTraversalActions];
  float sigma[kMaxTraversalActions];
  auto s = game.new_game(ctx.rng);
  double value = 0;
  int nodes = 0;
  for (;;) {
    if (o.max_nodes > 0 && nodes >= o.max_nodes) {
      value = cutoff_value(ctx, game, o.cutoff, s, 0);
      ctx.cut_off = true;
      break;
    }
    if (s.is_terminal()) {
      value = s.returns(0);
      break;
    }
    ++nodes;
    const int p = s.current_player();
    const ActionMask legal = s.legal_mask();
    co_await detail::current_policy(ctx, game, o, s, p, legal, ctx.scratch_input(game.input_width()), out, sigma);
    float probs[kMaxTraversalActions];
    mix_with_uniform(sigma, legal, A, o.value_epsilon, probs);
    const int a = sample_action(probs, legal, ctx.rng);
    const int vi = ctx.advantage.push(p, ctx.iteration, ActionMask{1} << a);
    detail::encode_history(game, s, ctx.advantage.input(vi));
    ctx.path.push_back({vi, a, sigma[a], probs[a]});
    game.apply(s, a, ctx.rng);
  }
  for (auto it = ctx.path.rbegin(); it != ctx.path.rend(); ++it) {
    ctx.advantage.target(it->sample)[it->action] = static_cast<float>(value);  // q(h, a): the return after a
    if (o.value_target == EscherValueTarget::kImportanceWeighted) {
      value *= static_cast<double>(it->sigma_a) / static_cast<double>(it->q_a);  // q_a > 0: it was sampled
      if (o.value_clip > 0) value = std::clamp(value, -o.value_clip, o.value_clip);
    }
  }
  ctx.nodes += nodes;
}

template <class G>
Task<void> escher_regret_traversal(TraversalContext& ctx, const G& game, const EscherOptions& o) {
  const int A = game.num_actions();
  const int traverser = ctx.traverser;
  const double side = traverser == 0 ? 1.0 : -1.0;  // q̂ is player 0's: the traverser's is ±q̂
  float out[kMaxTraversalActions];
  float sigma[kMaxTraversalActions];
  float q[kMaxTraversalActions];
  auto s = game.new_game(ctx.rng);
  int nodes = 0;
  for (;;) {
    if (o.max_nodes > 0 && nodes >= o.max_nodes) {
      ctx.cut_off = true;
      break;
    }
    if (s.is_terminal()) break;
    ++nodes;
    const int p = s.current_player();
    const ActionMask legal = s.legal_mask();
    int a;
    if (p == traverser) {
      const int ai = ctx.advantage.push(p, ctx.iteration, legal);
      co_await detail::current_policy(ctx, game, o, s, p, legal, ctx.advantage.input(ai), out, sigma);
      float* hist = ctx.scratch_input(2 * game.input_width());
      detail::encode_history(game, s, hist);
      co_await ctx.query(kValueNet, hist, legal, q);
      double u = 0;
      for (ActionMask m = legal; m != 0; m &= m - 1) {
        const int b = std::countr_zero(m);
        u += sigma[b] * side * q[b];
      }
      float* target = ctx.advantage.target(ai);
      for (ActionMask m = legal; m != 0; m &= m - 1) {
        const int b = std::countr_zero(m);
        target[b] = static_cast<float>(side * q[b] - u);
      }
      float probs[kMaxTraversalActions];
      mix_with_uniform(sigma, legal, A, o.sampling_epsilon, probs);
      a = sample_action(probs, legal, ctx.rng);
    } else {
      const int si = ctx.strategy.push(p, ctx.iteration, legal);
      co_await detail::current_policy(ctx, game, o, s, p, legal, ctx.strategy.input(si), out, ctx.strategy.target(si));
      std::copy_n(ctx.strategy.target(si), A, sigma);
      a = sample_action(sigma, legal, ctx.rng);
    }
    game.apply(s, a, ctx.rng);
  }
  ctx.nodes += nodes;
}

}  // namespace cfr
