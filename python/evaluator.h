#pragma once
// A Python callable as the networks of the traversals (cfr.traverse, module.cc): an Evaluator
// (sched/evaluator.h) whose evaluate() takes the GIL and calls
//     fn(inputs: float32 [B, W], legal: bool [B, A], net: int) -> float32 [B, A]
// with one batch of one network's queries, as the schedulers batch them. The caller of the
// traversals holds no GIL while C++ runs (gil_scoped_release), so a scheduler may call evaluate()
// from whichever thread it evaluates on (the pooled scheduler's inference thread included).
//
// What comes back is checked: anything not convertible to an array (NumPy, or a tensor through
// __array__), a dtype other than float32, a shape other than [B, A] is an InputError naming the
// network, what came back and what was expected. Non-finite values follow the engine's
// numeric-fault policy (docs/reliability.md §4): replaced by 0 and counted per network (skip), or
// an InputError naming the network and the count (stop). An exception the callable raises ends
// the traversals (the scheduler abandons them cleanly) and reaches Python as itself: rethrow()
// re-raises it in the calling thread. Thread-safety: evaluate() is called by one thread at a time
// (the Evaluator contract); the counts are read after the run.
#include <pybind11/pybind11.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "sched/evaluator.h"

namespace cfr::py {

struct PyEvaluatorStats {
  std::int64_t calls = 0;
  std::int64_t rows = 0;
  std::int64_t nonfinite = 0;  // output values replaced by 0
  double seconds = 0;          // inside evaluate(), the GIL's acquisition and the copies included
};

class PyEvaluator final : public Evaluator {
 public:
  /// fn: the callable; net: its network index (passed to fn); name: the network's name (errors);
  /// stop_on_nonfinite: the "stop" policy. Construct and destroy with the GIL held.
  PyEvaluator(pybind11::object fn, int net, std::string name, int input_width, int output_width, bool stop_on_nonfinite);
  ~PyEvaluator() override;
  EvaluatorInfo info() const override { return {in_, out_, 1, kMaxEvaluatorBatch}; }
  void evaluate(std::span<const float> inputs, std::span<const ActionMask> legal, std::span<float> outputs) override;
  /// Re-raises the callable's own exception if it raised one (call with the GIL held).
  void rethrow();
  const PyEvaluatorStats& stats() const noexcept { return stats_; }

 private:
  pybind11::object fn_;
  int net_;
  std::string name_;
  int in_, out_;
  bool stop_on_nonfinite_;
  PyEvaluatorStats stats_;
  std::unique_ptr<pybind11::error_already_set> error_;
};

}  // namespace cfr::py
