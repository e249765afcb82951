#pragma once
// `interleaved`: one thread keeps `window` traversals alive, refilling a slot the moment its
// traversal finishes (no waves). It resumes every runnable traversal until each has suspended on
// a query or finished, then evaluates the network with the most pending requests (FlushPolicy;
// in chunks of max_batch) and resumes the traversals that were waiting on it. Traversals fall
// into step, so batches hold most of the window throughout the phase.
//
// `recursive`: the same loop with window 1 — one request at a time, batch size 1 (the
// reference's baseline).
#include "sched/scheduler.h"

namespace cfr {

class InterleavedScheduler final : public Scheduler {
 public:
  /// `window` live traversals; at most `max_batch` rows per evaluate() call.
  InterleavedScheduler(int window, int max_batch, std::string name)
      : window_(window), max_batch_(max_batch), name_(std::move(name)) {}
  std::string_view name() const noexcept override { return name_; }
  RunStats run(const TraversalJob& job, std::span<Evaluator* const> nets, SampleSink& sink,
               const std::atomic<bool>* stop) override;

 private:
  int window_;
  int max_batch_;
  std::string name_;
  ContextPool pool_;
};

}  // namespace cfr
