#pragma once
// Completed samples flow from the traversals to a consumer thread (the trainer) through a bounded
// queue of blocks. A producer that finds the queue full waits (back-pressure), so memory stays
// bounded — capacity_blocks blocks of about block_samples samples, recycled — however fast
// traversals run. Blocks hold whole traversals, in traversal-index order.
//
// SampleDigest: an order-sensitive 64-bit FNV-1a digest of samples (every float's bits, masks,
// iterations, players), printed per iteration so that users can check reproducibility.
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "engine/traversal/traversal_context.h"
#include "sched/scheduler.h"

namespace cfr {

class SampleDigest {
 public:
  /// Mixes every sample of `b`, in order; adding buffers A then B equals adding A+B.
  void add(const SampleBuffer& b);
  /// Mixes a value (e.g. another digest).
  void add(std::uint64_t value) noexcept;
  std::uint64_t value() const noexcept { return h_; }

 private:
  void mix(const void* p, std::size_t n) noexcept;
  std::uint64_t h_ = 0xcbf29ce484222325ULL;
};

struct SampleBlock {
  SampleBuffer advantage;
  SampleBuffer strategy;
  int first_traversal = -1;
  int last_traversal = -1;
  int size() const noexcept { return advantage.size() + strategy.size(); }
};

struct SamplePipeOptions {
  int capacity_blocks = 8;   // queued blocks before producers wait
  int block_samples = 4096;  // a block is pushed once it holds at least this many samples
};

struct SamplePipeStats {
  std::int64_t blocks = 0;
  std::int64_t advantage_samples = 0;
  std::int64_t strategy_samples = 0;
  double producer_wait_seconds = 0;  // time producers spent blocked by back-pressure
  int max_queued = 0;
};

/// The largest queue bound a run may configure (memory.sample_pipe_blocks).
inline constexpr int kMaxPipeBlocks = 1 << 20;

class SamplePipe final : public SampleSink {
 public:
  using Consumer = std::function<void(const SampleBlock&)>;
  SamplePipe(int input_width, int output_width, const SamplePipeOptions& opts, Consumer consumer);
  ~SamplePipe() override;
  SamplePipe(const SamplePipe&) = delete;
  SamplePipe& operator=(const SamplePipe&) = delete;

  /// Appends a finished traversal's samples (called in index order by a scheduler).
  void consume(const TraversalContext& ctx) override;
  /// Pushes the partial block and waits until the consumer has processed everything; rethrows
  /// an exception the consumer threw.
  void flush();
  SamplePipeStats stats() const;
  /// Blocks allocated so far (≤ capacity_blocks + 2: the queue, the one being filled, the one
  /// being consumed).
  int blocks_allocated() const;

 private:
  void push_current(std::unique_lock<std::mutex>& lock);
  void consumer_loop();

  SamplePipeOptions opts_;
  int input_width_, output_width_;
  Consumer consumer_;
  mutable std::mutex m_;
  std::condition_variable not_full_, not_empty_, idle_;
  std::deque<std::unique_ptr<SampleBlock>> queue_;
  std::vector<std::unique_ptr<SampleBlock>> free_;
  std::unique_ptr<SampleBlock> current_;
  bool busy_ = false, closing_ = false;
  int allocated_ = 0;
  std::exception_ptr error_;
  SamplePipeStats stats_;
  std::thread thread_;
};

}  // namespace cfr
