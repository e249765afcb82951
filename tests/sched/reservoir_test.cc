#include <doctest/doctest.h>

#include <cmath>
#include <set>
#include <vector>

#include "engine/reservoir.h"

using cfr::ReservoirMemory;
using cfr::Rng;

namespace {
void offer(ReservoirMemory& m, int value) {
  const float in[2] = {static_cast<float>(value), 0.0F};
  const float out[3] = {static_cast<float>(value), 1.0F, 2.0F};
  m.insert(in, out, 0b101, value);
}
}  // namespace

TEST_CASE("a reservoir fills up to capacity and then keeps its size") {
  ReservoirMemory m(100, 2, 3, 1);
  for (int i = 0; i < 60; ++i) offer(m, i);
  CHECK(m.size() == 60);
  for (int i = 0; i < 60; ++i) CHECK(m.input(i)[0] == static_cast<float>(i));  // stored in order, contiguously
  for (int i = 60; i < 1000; ++i) offer(m, i);
  CHECK(m.size() == 100);
  CHECK(m.seen() == 1000);
  CHECK(m.bytes() == 100 * ReservoirMemory::bytes_per_sample(2, 3));
}

TEST_CASE("the reservoir rule keeps every offered sample with probability capacity/seen") {
  // 2000 reservoirs of 10 from a stream of 100: each value should survive 2000·10/100 = 200 times.
  std::vector<int> kept(100, 0);
  for (std::uint64_t seed = 0; seed < 2000; ++seed) {
    ReservoirMemory m(10, 2, 3, seed);
    for (int i = 0; i < 100; ++i) offer(m, i);
    for (int i = 0; i < 10; ++i) ++kept[static_cast<std::size_t>(m.iteration(i))];
  }
  double chi2 = 0;
  for (int k : kept) chi2 += (k - 200.0) * (k - 200.0) / 200.0;
  CHECK(chi2 < 160);  // 99 degrees of freedom: p ≈ 1e-4
}

TEST_CASE("batches are drawn without replacement straight into row-major buffers") {
  ReservoirMemory m(50, 2, 3, 7);
  for (int i = 0; i < 50; ++i) offer(m, i);
  Rng rng(3);
  std::vector<float> in(50 * 2), tg(50 * 3), legal(50 * 3), it(50);
  m.sample(50, rng, in, tg, legal, it);
  std::set<int> seen;
  for (int k = 0; k < 50; ++k) {
    seen.insert(static_cast<int>(it[static_cast<std::size_t>(k)]));
    CHECK(in[static_cast<std::size_t>(2 * k)] == it[static_cast<std::size_t>(k)]);
    CHECK(tg[static_cast<std::size_t>(3 * k)] == it[static_cast<std::size_t>(k)]);
    CHECK(legal[static_cast<std::size_t>(3 * k)] == 1.0F);
    CHECK(legal[static_cast<std::size_t>(3 * k + 1)] == 0.0F);
    CHECK(legal[static_cast<std::size_t>(3 * k + 2)] == 1.0F);
  }
  CHECK(seen.size() == 50);
  CHECK_THROWS(m.sample(51, rng, in, tg, legal, it));
}
