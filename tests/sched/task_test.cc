#include <doctest/doctest.h>

#include <stdexcept>

#include "engine/core/task.h"

using cfr::FrameArena;
using cfr::Task;

namespace {

Task<int> depth(FrameArena& arena, int n) {
  if (n == 0) co_return 0;
  co_return 1 + co_await depth(arena, n - 1);
}

Task<int> thrower(FrameArena&, int n) {
  if (n == 3) throw std::runtime_error("boom at 3");
  co_return n;
}

Task<int> sum_of_throwers(FrameArena& arena) {
  int s = 0;
  for (int i = 0; i < 5; ++i) s += co_await thrower(arena, i);
  co_return s;
}

template <class T>
T run(Task<T>& t) {
  t.handle().resume();
  REQUIRE(t.done());
  t.rethrow_if_failed();
  return t.handle().promise().value;
}

}  // namespace

// Symmetric transfer needs the compiler to emit the resume as a tail call, which it does in
// optimised builds; sanitizer instrumentation (ASan, TSan) suppresses the tail call, so there the
// depth is kept within the native stack. The outcome-sampling traversal is iterative and runs a
// million nodes in every build (traversal_test.cc).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr int kDeep = 10'000;
#else
constexpr int kDeep = 1'000'000;
#endif

TEST_CASE("a million nested awaits run in constant native stack through symmetric transfer") {
  FrameArena arena;
  auto t = depth(arena, kDeep);
  CHECK(run(t) == kDeep);
  t.destroy();
  CHECK(arena.bytes_in_use() == 0);  // every frame freed, in LIFO order
}

TEST_CASE("frames come from the arena and its memory is reused, not regrown") {
  FrameArena arena;
  for (int round = 0; round < 3; ++round) {
    auto t = depth(arena, 1000);
    CHECK(run(t) == 1000);
  }
  const std::size_t reserved = arena.bytes_reserved();
  for (int round = 0; round < 10; ++round) {
    auto t = depth(arena, 1000);
    CHECK(run(t) == 1000);
  }
  CHECK(arena.bytes_reserved() == reserved);
  CHECK(arena.high_water() > 0);
}

TEST_CASE("an exception thrown in a child task reaches the awaiting task and the top level") {
  FrameArena arena;
  auto t = sum_of_throwers(arena);
  CHECK_THROWS_WITH_AS(run(t), "boom at 3", std::runtime_error);
  t.destroy();
  CHECK(arena.bytes_in_use() == 0);
}

TEST_CASE("destroying a suspended top-level task frees its nested frames") {
  FrameArena arena;
  {
    auto t = depth(arena, 100);  // never started
  }
  CHECK(arena.bytes_in_use() == 0);
}
