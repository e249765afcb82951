// Tabular solver benchmarks on Leduc (and Kuhn): CFR+ iterations/s and exact exploitability
// evaluations/s. Targets: one Leduc CFR+ iteration ≤ 1 ms, an exact Leduc exploitability ≤ 20 ms.
//   build/bin/bench_solvers --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include "engine/best_response.h"
#include "engine/games.h"
#include "engine/tabular_cfr.h"

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

BENCHMARK_MAIN();
