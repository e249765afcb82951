#pragma once
// What a traversal coroutine owns while it runs: its RNG stream, its frame arena, the samples it
// produced, and the port through which it asks for network evaluations.
//
// A query is `co_await ctx.query(net, input, legal, output)`: the request lives inside the
// awaiting coroutine's frame (no allocation), the traversal suspends, and whoever owns the port
// (a batcher) later writes `output` and resumes the traversal. Inputs and outputs are spans owned
// by the traversal that stay valid while it is suspended.
#include <coroutine>
#include <cstdint>
#include <vector>

#include "engine/core/game.h"
#include "engine/core/rng.h"
#include "engine/core/task.h"

namespace cfr {

class TraversalContext;

/// One pending network query. Lives in the suspended coroutine's frame.
struct EvalRequest {
  int net = 0;
  const float* input = nullptr;  // input_width floats
  ActionMask legal = 0;
  float* output = nullptr;  // output_width floats, written before the waiter is resumed
  std::coroutine_handle<> waiter;
  TraversalContext* ctx = nullptr;
  std::int64_t submit_ns = 0;
};

/// Receives queries from suspended traversals (implemented by the schedulers' batchers).
class QueryPort {
 public:
  virtual ~QueryPort() = default;
  virtual void submit(EvalRequest& r) = 0;
};

/// Samples of one kind, stored contiguously (struct of arrays); clear() keeps the capacity.
/// Advantage samples: input, regret target, legal mask, iteration. Strategy samples: input,
/// policy target σ, legal mask, iteration.
struct SampleBuffer {
  int input_width = 0;
  int target_width = 0;
  std::vector<float> inputs;
  std::vector<float> targets;
  std::vector<ActionMask> masks;
  std::vector<std::int32_t> iterations;
  std::vector<std::int8_t> players;

  int size() const noexcept { return static_cast<int>(masks.size()); }
  void configure(int in_w, int out_w) {
    input_width = in_w;
    target_width = out_w;
    clear();
  }
  void clear() noexcept {
    inputs.clear();
    targets.clear();
    masks.clear();
    iterations.clear();
    players.clear();
  }
  /// Appends a sample with zero input and target; returns its index.
  int push(int player, int iteration, ActionMask legal) {
    inputs.resize(inputs.size() + static_cast<std::size_t>(input_width), 0.0F);
    targets.resize(targets.size() + static_cast<std::size_t>(target_width), 0.0F);
    masks.push_back(legal);
    iterations.push_back(iteration);
    players.push_back(static_cast<std::int8_t>(player));
    return size() - 1;
  }
  float* input(int i) noexcept { return inputs.data() + static_cast<std::size_t>(i) * input_width; }
  float* target(int i) noexcept { return targets.data() + static_cast<std::size_t>(i) * target_width; }
  const float* input(int i) const noexcept { return inputs.data() + static_cast<std::size_t>(i) * input_width; }
  const float* target(int i) const noexcept { return targets.data() + static_cast<std::size_t>(i) * target_width; }
  /// Appends all of `o` (same widths).
  void append(const SampleBuffer& o) {
    inputs.insert(inputs.end(), o.inputs.begin(), o.inputs.end());
    targets.insert(targets.end(), o.targets.begin(), o.targets.end());
    masks.insert(masks.end(), o.masks.begin(), o.masks.end());
    iterations.insert(iterations.end(), o.iterations.begin(), o.iterations.end());
    players.insert(players.end(), o.players.begin(), o.players.end());
  }
};

/// One step of an outcome-sampling trajectory at a traverser node, kept for the way back up.
struct OutcomeStep {
  std::int32_t sample;  // advantage sample index
  std::int32_t action;
  float sigma_a;  // σ(a)
  float q_a;      // sampling probability q(a)
};

/// One learning decision of an MMD rollout (engine/traversal/mmd.h), kept for the way back.
struct RolloutStep {
  std::int32_t sample;  // the decision's sample index
  std::int32_t action;
  std::int8_t player;
  float value;            // V(s)
  bool deviated = false;  // mmd.critic_deviation: a move off π; the traces stop here (mmd.h)
};

class TraversalContext {
 public:
  class Query {
   public:
    Query(TraversalContext& c, int net, const float* in, ActionMask legal, float* out) noexcept {
      req_.net = net;
      req_.input = in;
      req_.legal = legal;
      req_.output = out;
      req_.ctx = &c;
    }
    bool await_ready() const noexcept { return false; }
    void await_suspend(std::coroutine_handle<> h) {
      req_.waiter = h;
      req_.ctx->port->submit(req_);
    }
    void await_resume() const noexcept {}

   private:
    EvalRequest req_;
  };

  /// Prepares the context for traversal `index` of (iteration, traverser): its own RNG stream
  /// derive_seed(seed, iteration, traverser, index), empty sample buffers, a clean arena.
  void reset(std::uint64_t seed, int iteration_, int traverser_, int index_) {
    index = index_;
    iteration = iteration_;
    traverser = traverser_;
    rng.reseed(derive_seed(seed, static_cast<std::uint64_t>(iteration_), static_cast<std::uint64_t>(traverser_),
                           static_cast<std::uint64_t>(index_)));
    advantage.clear();
    strategy.clear();
    path.clear();
    rollout.clear();
    nodes = 0;
    cut_off = false;
    opponent = -1;
    learner_return = 0;
    arena_.reset();
  }

  Query query(int net, const float* input, ActionMask legal, float* output) noexcept {
    return Query(*this, net, input, legal, output);
  }

  FrameArena& arena() noexcept { return arena_; }
  const FrameArena& arena() const noexcept { return arena_; }

  /// A scratch input buffer of n floats (for queries whose input is not stored as a sample).
  float* scratch_input(int n) {
    if (static_cast<int>(scratch_.size()) < n) scratch_.resize(static_cast<std::size_t>(n));
    return scratch_.data();
  }

  Rng rng;
  int index = 0;
  int iteration = 0;
  int traverser = 0;
  std::int64_t nodes = 0;  // non-terminal nodes visited
  bool cut_off = false;    // ended by the node cap (valued by TraversalOptions::cutoff), not by the game
  /// MMD's league (engine/traversal/mmd.h): the fixed opponent a rollout played (−1: none) and the
  /// learner's return in that game (its score difference; a cut-off game's cut-off value).
  int opponent = -1;
  double learner_return = 0;
  SampleBuffer advantage;
  SampleBuffer strategy;
  std::vector<OutcomeStep> path;
  std::vector<RolloutStep> rollout;
  QueryPort* port = nullptr;
  int slot = 0;    // the scheduler's bookkeeping
  int worker = 0;  // the scheduler's bookkeeping (the thread that owns the traversal)

 private:
  FrameArena arena_;
  std::vector<float> scratch_;
};

}  // namespace cfr
