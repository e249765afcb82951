// Tabular solver benchmarks on Leduc (and Kuhn): CFR+ iterations/s and exact exploitability
// evaluations/s. Targets: one Leduc CFR+ iteration ≤ 1 ms, an exact Leduc exploitability ≤ 20 ms.
// Also: rebuilding Deep CFR's merged samples (memory.merge_duplicates) before each training.
//   build/bin/bench_solvers --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include "engine/games/games.h"
#include "engine/memory/reservoir.h"
#include "engine/tabular/best_response.h"
#include "engine/tabular/tabular_cfr.h"

using namespace cfr;

namespace {

void BM_Iteration(benchmark::State& st, const char* game, TabularAlgo algo) {
  const GameTree t = build_game_tree(game);
  TabularSolver s(t, {.algo = algo, .seed = 1});
  for (int i = 0; i < 10; ++i) s.run_iteration();  // warm up
  const auto n0 = s.nodes_visited();
  for (auto _ : st) s.run_iteration();
  st.counters["iterations/s"] = benchmark::Counter(static_cast<double>(st.iterations()), benchmark::Counter::kIsRate);
  st.counters["nodes/s"] = benchmark::Counter(static_cast<double>(s.nodes_visited() - n0), benchmark::Counter::kIsRate);
}
BENCHMARK_CAPTURE(BM_Iteration, leduc_cfr_plus, "leduc", TabularAlgo::kCfrPlus)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Iteration, leduc_cfr, "leduc", TabularAlgo::kCfr)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Iteration, leduc_lcfr, "leduc", TabularAlgo::kLinearCfr)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Iteration, leduc_es_mccfr, "leduc", TabularAlgo::kExternalSampling)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Iteration, leduc_os_mccfr, "leduc", TabularAlgo::kOutcomeSampling)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Iteration, kuhn_cfr, "kuhn", TabularAlgo::kCfr)->Unit(benchmark::kMicrosecond);

// Exact NashConv of a CFR+ average policy (validation, on-policy value, both best responses).
void BM_Exploitability(benchmark::State& st, const char* game) {
  const GameTree t = build_game_tree(game);
  TabularSolver s(t, {.algo = TabularAlgo::kCfrPlus});
  for (int i = 0; i < 50; ++i) s.run_iteration();
  const TabularPolicy p = s.average_policy();
  for (auto _ : st) benchmark::DoNotOptimize(exploitability(p).nash_conv);
  st.counters["evaluations/s"] = benchmark::Counter(static_cast<double>(st.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK_CAPTURE(BM_Exploitability, leduc, "leduc")->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Exploitability, kuhn, "kuhn")->Unit(benchmark::kMicrosecond);

void BM_BuildTree(benchmark::State& st, const char* game) {
  for (auto _ : st) benchmark::DoNotOptimize(build_game_tree(game).num_nodes());
}
BENCHMARK_CAPTURE(BM_BuildTree, leduc, "leduc")->Unit(benchmark::kMillisecond);

}  // namespace

namespace {

// MergedSamples::rebuild on a full Leduc-sized memory (24-float inputs, 3 targets, 1 M samples
// over 2000 distinct inputs) after each "iteration" offered 20,000 new samples (about what a
// Leduc iteration of configs/leduc.toml stores per memory). Arg 0: a new view each time (every
// input hashed); Arg 1: one view kept across rebuilds (only the rewritten slots hashed). Both
// give the same rows; the ratio is the saving per training.
void BM_MergedRebuild(benchmark::State& st) {
  constexpr int kW = 24, kA = 3, kDistinct = 2000;
  constexpr std::int64_t kCapacity = 1'000'000;
  ReservoirMemory m(kCapacity, kW, kA, 1);
  Rng rng(2);
  int iteration = 1;
  auto offer = [&](int n) {
    float in[kW], out[kA];
    for (int j = 0; j < n; ++j) {
      const auto v = rng.below64(kDistinct);
      for (int i = 0; i < kW; ++i) in[i] = static_cast<float>((v >> (i % 12)) & 1U);
      in[kW - 1] = static_cast<float>(v);
      for (float& t : out) t = static_cast<float>(rng.uniform() - 0.5);
      m.insert(in, out, ActionMask{0b111}, iteration);
    }
    ++iteration;
  };
  offer(static_cast<int>(kCapacity));
  MergedSamples kept;
  kept.rebuild(m, true);
  for (auto _ : st) {
    st.PauseTiming();
    offer(20'000);
    st.ResumeTiming();
    if (st.range(0) == 0) {
      MergedSamples fresh;
      fresh.rebuild(m, true);
      benchmark::DoNotOptimize(fresh.rows());
    } else {
      kept.rebuild(m, true);
      benchmark::DoNotOptimize(kept.rows());
    }
  }
  st.counters["ns/sample"] = benchmark::Counter(static_cast<double>(kCapacity) * static_cast<double>(st.iterations()),
                                                benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_MergedRebuild)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
