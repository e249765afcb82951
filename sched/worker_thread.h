#pragma once
// A long-lived worker thread that runs one job at a time (the trainer thread, the threads of
// parallel traversal shares).
#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>

namespace cfr {

/// One long-lived thread that runs one job at a time (the trainer thread, the threads of
/// parallel traversal shares). A thread per
/// iteration would make glibc and OpenBLAS set up per-thread state again each time (the soak
/// run's resident memory crept up with it).
class WorkerThread {
 public:
  WorkerThread() : thread_([this] { loop(); }) {}
  ~WorkerThread() {
    {
      std::lock_guard lock(m_);
      quit_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  WorkerThread(const WorkerThread&) = delete;
  WorkerThread& operator=(const WorkerThread&) = delete;
  void submit(std::function<void()> job) {
    {
      std::lock_guard lock(m_);
      job_ = std::move(job);
      busy_ = true;
    }
    cv_.notify_all();
  }
  /// Waits for the submitted job; rethrows what it threw.
  void wait() {
    std::unique_lock lock(m_);
    cv_.wait(lock, [&] { return !busy_; });
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
  }

 private:
  void loop() {
    std::unique_lock lock(m_);
    for (;;) {
      cv_.wait(lock, [&] { return quit_ || static_cast<bool>(job_); });
      if (quit_) return;
      auto job = std::move(job_);
      job_ = nullptr;
      lock.unlock();
      std::exception_ptr err;
      try {
        job();
      } catch (...) {
        err = std::current_exception();
      }
      lock.lock();
      error_ = err;
      busy_ = false;
      cv_.notify_all();
    }
  }
  std::mutex m_;
  std::condition_variable cv_;
  std::function<void()> job_;
  std::exception_ptr error_;
  bool busy_ = false, quit_ = false;
  std::thread thread_;
};

}  // namespace cfr
