#pragma once
// Coroutine primitives of the traversal engine.
//
// Task<T>: a lazy coroutine returning T. Awaiting a Task starts it by symmetric transfer and the
// child's final suspend transfers straight back to its awaiter, so nested traversal frames never
// grow the native stack (a million nested awaits run in constant stack). A top-level Task is
// started with start() and, once it has finished, reports through done() / result().
//
// Frames come from a FrameArena when the coroutine's first parameter is a FrameArena& or an
// object with an `arena()` member returning one (the traversal context): a LIFO bump allocator
// in chunks that are kept across traversals, so a traversal allocates nothing once warm. Other
// coroutines use the global operator new.
//
// Thread-safety: a Task and its arena belong to one thread at a time; the scheduler that owns a
// traversal may hand it to another thread only while it is suspended.
#include <coroutine>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <new>
#include <utility>
#include <vector>

namespace cfr {

/// LIFO bump allocator for coroutine frames. Each block carries a 16-byte header naming its
/// arena, so deallocation (which only receives the pointer and size) finds its way back.
class FrameArena {
 public:
  FrameArena() = default;
  FrameArena(const FrameArena&) = delete;
  FrameArena& operator=(const FrameArena&) = delete;

  void* allocate(std::size_t n) {
    const std::size_t need = round_up(n + kHeader);
    if (current_ >= chunks_.size() || chunks_[current_].used + need > chunks_[current_].size) grow(need);
    Chunk& c = chunks_[current_];
    std::byte* p = c.mem.get() + c.used;
    c.used += need;
    in_use_ += need;
    if (in_use_ > high_water_) high_water_ = in_use_;
    *reinterpret_cast<FrameArena**>(p) = this;
    return p + kHeader;
  }

  /// Frees the block at p (size n as passed to allocate). Blocks are freed in LIFO order by
  /// nested coroutines; a block freed out of order is reclaimed by the next reset().
  void deallocate(void* ptr, std::size_t n) noexcept {
    const std::size_t need = round_up(n + kHeader);
    std::byte* p = static_cast<std::byte*>(ptr) - kHeader;
    in_use_ -= need;
    while (true) {
      Chunk& c = chunks_[current_];
      if (p + need == c.mem.get() + c.used) {
        c.used -= need;
        break;
      }
      if (c.used == 0 && current_ > 0) {
        --current_;
        continue;
      }
      break;  // out of order: left for reset()
    }
    while (chunks_[current_].used == 0 && current_ > 0) --current_;
  }

  /// Frees everything (all frames of the arena must be destroyed). Keeps the chunks.
  void reset() noexcept {
    for (auto& c : chunks_) c.used = 0;
    current_ = 0;
    in_use_ = 0;
  }

  std::size_t bytes_in_use() const noexcept { return in_use_; }
  std::size_t high_water() const noexcept { return high_water_; }
  std::size_t bytes_reserved() const noexcept {
    std::size_t s = 0;
    for (const auto& c : chunks_) s += c.size;
    return s;
  }

  static void free_block(void* ptr, std::size_t n) noexcept {
    FrameArena* a = *reinterpret_cast<FrameArena**>(static_cast<std::byte*>(ptr) - kHeader);
    if (a != nullptr) {
      a->deallocate(ptr, n);
    } else {
      ::operator delete(static_cast<std::byte*>(ptr) - kHeader);
    }
  }

  static void* global_block(std::size_t n) {
    auto* p = static_cast<std::byte*>(::operator new(n + kHeader));
    *reinterpret_cast<FrameArena**>(p) = nullptr;
    return p + kHeader;
  }

 private:
  static constexpr std::size_t kHeader = 16;
  static constexpr std::size_t kChunk = 8 * 1024;
  static std::size_t round_up(std::size_t n) noexcept { return (n + 15) & ~std::size_t{15}; }

  struct Chunk {
    std::unique_ptr<std::byte[]> mem;
    std::size_t size = 0;
    std::size_t used = 0;
  };

  // The current chunk cannot fit `need`: move to the next chunk if it is big enough, else insert
  // a new one after the current.
  void grow(std::size_t need) {
    const std::size_t next = chunks_.empty() ? 0 : current_ + 1;
    if (next < chunks_.size() && chunks_[next].size >= need) {
      current_ = next;
      chunks_[next].used = 0;
      return;
    }
    const std::size_t size = need > kChunk ? need : kChunk;
    chunks_.insert(chunks_.begin() + static_cast<std::ptrdiff_t>(next),
                   Chunk{std::unique_ptr<std::byte[]>(new std::byte[size]), size, 0});
    current_ = next;
  }

  std::vector<Chunk> chunks_;
  std::size_t current_ = 0;
  std::size_t in_use_ = 0;
  std::size_t high_water_ = 0;
};

namespace detail {

template <class A>
FrameArena* arena_of(A& a) noexcept {
  if constexpr (std::is_same_v<std::remove_cvref_t<A>, FrameArena>) {
    return &a;
  } else if constexpr (requires {
                         { a.arena() } -> std::same_as<FrameArena&>;
                       }) {
    return &a.arena();
  } else {
    return nullptr;
  }
}

struct PromiseAlloc {
  template <class First, class... Rest>
  static void* operator new(std::size_t n, First& first, Rest&...) {
    if (FrameArena* a = arena_of(first)) return a->allocate(n);
    return FrameArena::global_block(n);
  }
  static void* operator new(std::size_t n) { return FrameArena::global_block(n); }
  static void operator delete(void* p, std::size_t n) noexcept { FrameArena::free_block(p, n); }
};

struct PromiseBase : PromiseAlloc {
  std::coroutine_handle<> continuation = std::noop_coroutine();
  std::exception_ptr error;

  // At the end a task transfers straight to its awaiter (noop_coroutine for a top-level task,
  // which hands control back to whoever resumed it).
  struct FinalAwaiter {
    bool await_ready() noexcept { return false; }
    template <class P>
    std::coroutine_handle<> await_suspend(std::coroutine_handle<P> h) noexcept {
      return h.promise().continuation;
    }
    void await_resume() noexcept {}
  };

  std::suspend_always initial_suspend() noexcept { return {}; }
  FinalAwaiter final_suspend() noexcept { return {}; }
  void unhandled_exception() noexcept { error = std::current_exception(); }
};

template <class T>
struct Promise : PromiseBase {
  T value{};
  template <class U>
  void return_value(U&& v) {
    value = std::forward<U>(v);
  }
};
template <>
struct Promise<void> : PromiseBase {
  void return_void() noexcept {}
};

}  // namespace detail

template <class T = void>
class [[nodiscard]] Task {
 public:
  struct promise_type : detail::Promise<T> {
    Task get_return_object() noexcept { return Task(std::coroutine_handle<promise_type>::from_promise(*this)); }
  };
  using Handle = std::coroutine_handle<promise_type>;

  Task() = default;
  explicit Task(Handle h) noexcept : h_(h) {}
  Task(Task&& o) noexcept : h_(std::exchange(o.h_, {})) {}
  Task& operator=(Task&& o) noexcept {
    if (this != &o) {
      destroy();
      h_ = std::exchange(o.h_, {});
    }
    return *this;
  }
  Task(const Task&) = delete;
  Task& operator=(const Task&) = delete;
  ~Task() { destroy(); }

  /// Awaiting a Task runs it to completion (symmetric transfer in and out) and yields its value,
  /// rethrowing its exception.
  auto operator co_await() && noexcept {
    struct Awaiter {
      Handle h;
      bool await_ready() noexcept { return false; }
      std::coroutine_handle<> await_suspend(std::coroutine_handle<> awaiting) noexcept {
        h.promise().continuation = awaiting;
        return h;
      }
      T await_resume() {
        if (h.promise().error) std::rethrow_exception(h.promise().error);
        if constexpr (!std::is_void_v<T>) return std::move(h.promise().value);
      }
    };
    return Awaiter{h_};
  }

  /// For top-level tasks: the handle to resume to start it (it returns to the resumer when it
  /// suspends on a query or finishes).
  Handle handle() const noexcept { return h_; }
  bool valid() const noexcept { return static_cast<bool>(h_); }
  bool done() const noexcept { return h_ && h_.done(); }
  /// Rethrows the task's exception, if any. Precondition: done().
  void rethrow_if_failed() const {
    if (h_.promise().error) std::rethrow_exception(h_.promise().error);
  }
  void destroy() noexcept {
    if (h_) h_.destroy();
    h_ = {};
  }

 private:
  Handle h_{};
};

}  // namespace cfr
