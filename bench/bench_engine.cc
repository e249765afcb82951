// Lost Cities engine microbenchmarks (Google Benchmark).
//   build/bin/bench_engine --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
// Reports: random playouts in actions/s on one thread (legal mask + RNG + apply, games restarted
// from pre-dealt states), encoding and legal-mask ns/state over a pool of states from random
// play, and decisions/s for every bot.
#include <benchmark/benchmark.h>

#include <vector>

#include "engine/games/bots.h"
#include "engine/games/lost_cities.h"
#include "engine/games/match.h"

using namespace cfr::lc;

namespace {

// States from random play. 512 states (~0.4 MB) stay in L2 like the hot state of a traversal; a
// pool of several MB would measure cache misses rather than the encoder.
constexpr std::size_t kPool = 512;

std::vector<State> state_pool(std::size_t n) {
  std::vector<State> pool;
  cfr::Rng rng(5);
  for (int g = 0; pool.size() < n; ++g) {
    State s = State::deal(Rules{}, static_cast<std::uint64_t>(g));
    while (!s.is_terminal() && pool.size() < n) {
      if (rng.below(4) == 0) pool.push_back(s);
      s.apply_action(random_legal_action(s, rng));
    }
  }
  return pool;
}

// Arg 1: encode every state for the mover before choosing its action. The difference from Arg 0
// is the encoder's cost on hot, never-repeating states (the traversal case).
void BM_RandomPlayout(benchmark::State& st) {
  const bool encode = st.range(0) != 0;
  std::vector<float> out(297);
  std::vector<State> deals;
  for (int g = 0; g < 64; ++g) deals.push_back(State::deal(Rules{}, static_cast<std::uint64_t>(g)));
  cfr::Rng rng(1);
  std::int64_t actions = 0;
  std::size_t k = 0;
  for (auto _ : st) {
    State s = deals[k++ & 63];
    while (!s.is_terminal()) {
      if (encode) {
        s.encode_info_state(s.current_player(), out);
        benchmark::DoNotOptimize(out.data());
      }
      const cfr::ActionMask m = s.legal_mask();
      s.apply_action(cfr::mask_nth(m, static_cast<int>(rng.below(static_cast<std::uint32_t>(cfr::mask_count(m))))));
      ++actions;
    }
    benchmark::DoNotOptimize(s);
  }
  st.counters["actions/s"] = benchmark::Counter(static_cast<double>(actions), benchmark::Counter::kIsRate);
  st.counters["actions/game"] = static_cast<double>(actions) / static_cast<double>(st.iterations());
}
BENCHMARK(BM_RandomPlayout)->Arg(0)->Arg(1);

// Arg: pool size. 512 = hot (the traversal case); 8192 (~6 MB) = states fetched from memory.
void BM_Encode(benchmark::State& st) {
  const auto n = static_cast<std::size_t>(st.range(0));
  const auto pool = state_pool(n);
  std::vector<float> out(297);
  std::size_t k = 0;
  for (auto _ : st) {
    const State& s = pool[k++ % n];
    s.encode_info_state(s.current_player(), out);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  st.SetItemsProcessed(st.iterations());
}
BENCHMARK(BM_Encode)->Arg(kPool)->Arg(8192);

void BM_LegalMask(benchmark::State& st) {
  const auto pool = state_pool(kPool);
  std::size_t k = 0;
  for (auto _ : st) benchmark::DoNotOptimize(pool[k++ % kPool].legal_mask());
  st.SetItemsProcessed(st.iterations());
}
BENCHMARK(BM_LegalMask);

// 8192 states: with a small pool the branch predictor learns the repeating sequence and the rule
// bot looks 6x faster than it is in a real game (see BM_MatchGame).
void BM_BotDecision(benchmark::State& st, const char* name) {
  constexpr std::size_t kBig = 8192;
  const auto pool = state_pool(kBig);
  auto bot = make_bot(name, Rules{});
  cfr::Rng rng(2);
  std::size_t k = 0;
  for (auto _ : st) benchmark::DoNotOptimize(bot->choose_action(pool[k++ % kBig], rng));
  st.SetItemsProcessed(st.iterations());
}
BENCHMARK_CAPTURE(BM_BotDecision, random, "random");
BENCHMARK_CAPTURE(BM_BotDecision, discard_only, "discard_only");
BENCHMARK_CAPTURE(BM_BotDecision, heuristic_balanced, "heuristic_balanced");
BENCHMARK_CAPTURE(BM_BotDecision, heuristic_aggressive, "heuristic_aggressive");
BENCHMARK_CAPTURE(BM_BotDecision, heuristic_cautious, "heuristic_cautious");
BENCHMARK_CAPTURE(BM_BotDecision, heuristic_noisy, "heuristic_noisy");

// Whole games of a bot against random (deal included): decisions/s as a match sees them.
void BM_MatchGame(benchmark::State& st, const char* name) {
  auto bot = make_bot(name, Rules{});
  auto rnd = make_bot("random", Rules{});
  cfr::Rng r0(1), r1(2);
  std::uint64_t seed = 0;
  std::int64_t actions = 0;
  for (auto _ : st) {
    const State s = play_game(*bot, *rnd, Rules{}, seed++, r0, r1, 10000);
    actions += s.move_count();
  }
  st.counters["actions/s"] = benchmark::Counter(static_cast<double>(actions), benchmark::Counter::kIsRate);
  st.counters["games/s"] = benchmark::Counter(static_cast<double>(st.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK_CAPTURE(BM_MatchGame, heuristic_balanced, "heuristic_balanced");
BENCHMARK_CAPTURE(BM_MatchGame, random, "random");

}  // namespace

BENCHMARK_MAIN();
