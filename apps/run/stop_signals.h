#pragma once
// SIGINT/SIGTERM for long-running programs, on Boost.Asio: a signal_set waited on by a thread of
// its own (the handlers run there, not in signal context). The first signal sets `stop` and says
// so: the program ends after its current step. A second exits at once with 128 + the signal
// (files are written atomically, so what was written stays intact). The default handling comes
// back when the object is destroyed.
#include <atomic>
#include <memory>
#include <string>

namespace cfr {

class StopSignals {
 public:
  /// `what_stays` ends the second signal's message ("the latest checkpoint is intact").
  StopSignals(std::atomic<bool>& stop, std::string program, std::string what_stays);
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cfr
