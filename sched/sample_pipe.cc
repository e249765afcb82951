#include "sched/sample_pipe.h"

#include <chrono>
#include <cstring>

namespace cfr {

void SampleDigest::mix(const void* p, std::size_t n) noexcept {
  const auto* b = static_cast<const unsigned char*>(p);
  for (std::size_t i = 0; i < n; ++i) {
    h_ ^= b[i];
    h_ *= 0x100000001b3ULL;
  }
}

void SampleDigest::add(const SampleBuffer& b) {
  // Sample by sample: the digest of a stream does not depend on how it was cut into buffers.
  for (int i = 0; i < b.size(); ++i) {
    const auto k = static_cast<std::size_t>(i);
    mix(b.input(i), static_cast<std::size_t>(b.input_width) * sizeof(float));
    mix(b.target(i), static_cast<std::size_t>(b.target_width) * sizeof(float));
    mix(&b.masks[k], sizeof(ActionMask));
    mix(&b.iterations[k], sizeof(std::int32_t));
    mix(&b.players[k], 1);
  }
}

void SampleDigest::add(std::uint64_t value) noexcept { mix(&value, sizeof value); }

SamplePipe::SamplePipe(int input_width, int output_width, const SamplePipeOptions& opts, Consumer consumer)
    : opts_(opts), input_width_(input_width), output_width_(output_width), consumer_(std::move(consumer)) {
  CFR_CHECK(opts.capacity_blocks >= 1 && opts.block_samples >= 1, "pipe capacity {} block {}", opts.capacity_blocks,
            opts.block_samples);
  thread_ = std::thread([this] { consumer_loop(); });
}

SamplePipe::~SamplePipe() {
  {
    std::lock_guard lock(m_);
    closing_ = true;
  }
  not_empty_.notify_all();
  thread_.join();
}

void SamplePipe::consume(const TraversalContext& ctx) {
  std::unique_lock lock(m_);
  if (error_) std::rethrow_exception(error_);
  if (!current_) {
    if (!free_.empty()) {
      current_ = std::move(free_.back());
      free_.pop_back();
    } else {
      current_ = std::make_unique<SampleBlock>();
      ++allocated_;
    }
    current_->advantage.configure(input_width_, output_width_);
    current_->strategy.configure(input_width_, output_width_);
    current_->first_traversal = ctx.index;
  }
  lock.unlock();  // the block being filled belongs to the (serialised) producer
  current_->advantage.append(ctx.advantage);
  current_->strategy.append(ctx.strategy);
  current_->last_traversal = ctx.index;
  if (current_->size() >= opts_.block_samples) {
    lock.lock();
    push_current(lock);
  }
}

void SamplePipe::push_current(std::unique_lock<std::mutex>& lock) {
  if (!current_) return;
  const auto t0 = std::chrono::steady_clock::now();
  not_full_.wait(lock, [&] { return static_cast<int>(queue_.size()) < opts_.capacity_blocks || error_; });
  stats_.producer_wait_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (error_) std::rethrow_exception(error_);
  stats_.advantage_samples += current_->advantage.size();
  stats_.strategy_samples += current_->strategy.size();
  ++stats_.blocks;
  queue_.push_back(std::move(current_));
  stats_.max_queued = std::max(stats_.max_queued, static_cast<int>(queue_.size()));
  not_empty_.notify_one();
}

void SamplePipe::flush() {
  std::unique_lock lock(m_);
  push_current(lock);
  idle_.wait(lock, [&] { return (queue_.empty() && !busy_) || error_; });
  if (error_) std::rethrow_exception(error_);
}

SamplePipeStats SamplePipe::stats() const {
  std::lock_guard lock(m_);
  return stats_;
}

int SamplePipe::blocks_allocated() const {
  std::lock_guard lock(m_);
  return allocated_;
}

void SamplePipe::consumer_loop() {
  std::unique_lock lock(m_);
  for (;;) {
    not_empty_.wait(lock, [&] { return !queue_.empty() || closing_; });
    if (queue_.empty()) return;  // closing
    auto block = std::move(queue_.front());
    queue_.pop_front();
    busy_ = true;
    const bool failed = error_ != nullptr;
    not_full_.notify_one();
    lock.unlock();
    std::exception_ptr err;
    try {
      if (!failed) consumer_(*block);
    } catch (...) {
      err = std::current_exception();
    }
    lock.lock();
    if (err && !error_) error_ = err;
    busy_ = false;
    free_.push_back(std::move(block));
    if (queue_.empty() || error_) idle_.notify_all();
    if (error_) not_full_.notify_all();
  }
}

}  // namespace cfr
