#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>
#include <vector>

#include "engine/core/errors.h"
#include "engine/memory/reservoir.h"

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

TEST_CASE("merged samples: one row per distinct input with the weighted mean target and total weight") {
  ReservoirMemory m(100, 2, 3, 1);
  auto put = [&](float x, float t0, float t1, int iteration) {
    const float in[2] = {x, 0.5F};
    const float out[3] = {t0, t1, 0.0F};
    m.insert(in, out, 0b011, iteration);
  };
  put(1, 4, -2, 1);
  put(2, 1, 1, 2);
  put(1, -2, 6, 3);  // input 1 again: linear mean (1·4 + 3·(−2))/4 = −0.5, (1·(−2) + 3·6)/4 = 4
  put(3, 7, 7, 5);
  cfr::MergedSamples view;
  view.rebuild(m, true);
  REQUIRE(view.rows() == 3);
  CHECK(view.input(0)[0] == 1.0F);  // rows in the order of their first sample
  CHECK(view.input(1)[0] == 2.0F);
  CHECK(view.weight(0) == 4.0);
  CHECK(view.mean_target(0, 0) == doctest::Approx(-0.5));
  CHECK(view.mean_target(0, 1) == doctest::Approx(4.0));
  CHECK(view.weight(2) == 5.0);
  view.rebuild(m, false);  // equal weights: plain means, weight = count
  CHECK(view.weight(0) == 2.0);
  CHECK(view.mean_target(0, 0) == doctest::Approx(1.0));
  CHECK(view.mean_target(0, 1) == doctest::Approx(2.0));

  // A batch of every row carries each input once, with its mean and weight; more is refused.
  view.rebuild(m, true);
  Rng rng(9);
  std::vector<float> in(3 * 2), tg(3 * 3), legal(3 * 3), w(3);
  view.sample(3, rng, in, tg, legal, w);
  std::set<float> inputs;
  for (int k = 0; k < 3; ++k) {
    const auto K = static_cast<std::size_t>(k);
    inputs.insert(in[2 * K]);
    if (in[2 * K] == 1.0F) {
      CHECK(tg[3 * K] == doctest::Approx(-0.5));
      CHECK(w[K] == 4.0F);
    }
    CHECK(legal[3 * K + 1] == 1.0F);
    CHECK(legal[3 * K + 2] == 0.0F);
  }
  CHECK(inputs.size() == 3);
  CHECK_THROWS(view.sample(4, rng, in, tg, legal, w));

  // The weighted squared error over the rows differs from that over the raw samples by a
  // constant: their gradients agree for every prediction.
  auto raw_grad = [&](double p) {  // d/dp Σ_k w_k (p − t_k)², samples of input 1, action 0
    return 2 * (1 * (p - 4) + 3 * (p + 2));
  };
  for (double p : {-3.0, 0.0, 2.5}) CHECK(raw_grad(p) == doctest::Approx(2 * view.weight(0) * (p - view.mean_target(0, 0))));
}

TEST_CASE("merged samples refuse one input with two legal masks") {
  ReservoirMemory m(10, 1, 2, 1);
  const float in[1] = {1.0F}, out[2] = {0.0F, 0.0F};
  m.insert(in, out, 0b01, 1);
  m.insert(in, out, 0b11, 2);
  cfr::MergedSamples view;
  CHECK_THROWS_AS(view.rebuild(m, true), cfr::CheckError);
}

namespace {
// Two merged views are the same: rows, inputs, masks, weights and means bit for bit, the row
// of every input, and the batches drawn with one seed.
void check_same_view(cfr::MergedSamples& a, cfr::MergedSamples& b, const ReservoirMemory& m) {
  REQUIRE(a.rows() == b.rows());
  const int W = m.input_width(), A = m.target_width();
  for (std::int64_t r = 0; r < a.rows(); ++r) {
    for (int i = 0; i < W; ++i) REQUIRE(a.input(r)[i] == b.input(r)[i]);
    REQUIRE(a.weight(r) == b.weight(r));
    for (int t = 0; t < A; ++t) REQUIRE(a.mean_target(r, t) == b.mean_target(r, t));
  }
  for (std::int64_t k = 0; k < m.size(); ++k) REQUIRE(a.find(m.input(k)) == b.find(m.input(k)));
  const auto n = static_cast<int>(std::min<std::int64_t>(a.rows(), 16));
  std::vector<float> in_a(static_cast<std::size_t>(n * W)), tg_a(static_cast<std::size_t>(n * A)), lg_a(tg_a.size()),
      w_a(static_cast<std::size_t>(n));
  auto in_b = in_a, tg_b = tg_a, lg_b = lg_a, w_b = w_a;
  Rng ra(5), rb(5);
  a.sample(n, ra, in_a, tg_a, lg_a, w_a);
  b.sample(n, rb, in_b, tg_b, lg_b, w_b);
  CHECK(in_a == in_b);
  CHECK(tg_a == tg_b);
  CHECK(lg_a == lg_b);
  CHECK(w_a == w_b);
}
}  // namespace

TEST_CASE("merged samples rebuilt again from one memory equal a rebuild from nothing") {
  // The view keeps its dictionary of inputs across rebuilds and rereads only the slots written
  // since; whatever the memory went through, the result is that of a fresh view.
  ReservoirMemory m(400, 3, 2, 11);
  Rng rng(3);
  auto insert = [&](int distinct, int iteration) {
    const auto v = static_cast<int>(rng.below64(static_cast<std::uint64_t>(distinct)));
    const float in[3] = {static_cast<float>(v % 7), static_cast<float>(v / 7), 1.0F};
    const float out[2] = {static_cast<float>(rng.uniform() * 4 - 2), static_cast<float>(rng.uniform())};
    m.insert(in, out, v % 2 == 0 ? cfr::ActionMask{0b11} : cfr::ActionMask{0b01}, iteration);
  };
  cfr::MergedSamples kept;
  auto compare = [&](bool linear) {
    kept.rebuild(m, linear);
    cfr::MergedSamples fresh;
    fresh.rebuild(m, linear);
    check_same_view(kept, fresh, m);
  };
  for (int it = 1; it <= 12; ++it) {  // filling, then reservoir replacements of some slots
    for (int j = 0; j < 150; ++j) insert(60, it);
    compare(it % 3 != 0);
  }
  compare(true);  // nothing written since: every slot is read from the dictionary

  std::stringstream saved;  // a load rewrites every slot (new stamps), here and in another memory
  m.save(saved);
  for (int j = 0; j < 500; ++j) insert(60, 13);
  m.load(saved, "test");
  compare(true);
  ReservoirMemory other(400, 3, 2, 11);
  std::stringstream again(saved.str());
  other.load(again, "test");
  kept.rebuild(other, true);
  cfr::MergedSamples fresh;
  fresh.rebuild(other, true);
  check_same_view(kept, fresh, other);

  m.clear();  // emptied and refilled with other inputs: old dictionary entries hold no row
  for (int j = 0; j < 100; ++j) insert(1000, 14);
  compare(true);
  // New inputs at every rebuild: the dictionary grows to twice the memory's size plus 4096
  // entries, then restarts.
  std::size_t most = 0;
  bool restarted = false;
  for (int round = 0; round < 16; ++round) {
    m.clear();
    for (int j = 0; j < 400; ++j) insert(1 << 22, 15 + round);
    compare(round % 2 == 0);
    restarted = restarted || kept.dictionary_size() < most;
    most = std::max(most, kept.dictionary_size());
  }
  CHECK(restarted);
  CHECK(most <= 2 * 400 + 4096 + 400);
}
