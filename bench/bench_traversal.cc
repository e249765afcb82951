// Lost Cities traversal throughput per scheduler and window (deep-cfr.md §2 traversals, reference
// default options), with
//   (a) the zero-cost evaluator (uniform outputs): the engine's ceiling, encoding included;
//   (b) the hashed evaluator with an injected latency per forward, mimicking a GPU call.
// Each configuration runs a phase of --traversals traversals, --repeats times after a warm-up
// phase; reported: median nodes/s (and spread), realised mean batch and its ratio to the window.
//   build/bin/bench_traversal [--traversals 2000] [--repeats 5] [--latency-us 100] [--json FILE]
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "engine/traversal/traversal.h"
#include "engine/traversal/traversal_games.h"
#include "sched/evaluator.h"
#include "sched/scheduler.h"

using namespace cfr;

namespace {

class CountingSink final : public SampleSink {
 public:
  void consume(const TraversalContext& ctx) override { samples += ctx.advantage.size() + ctx.strategy.size(); }
  std::int64_t samples = 0;
};

struct Row {
  std::string evaluator, scheduler;
  SchedulerOptions cfg;
  double median_nps = 0, min_nps = 0, max_nps = 0, mean_batch = 0, nodes_per_traversal = 0;
  std::int64_t forwards = 0;
};

/// An option's value in a case (recursive has none: window, batch and threads 1).
int opt(const SchedulerOptions& o, const std::string& name) {
  const auto it = o.values().find(name);
  return it == o.values().end() ? 1 : it->second;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"bench_traversal: Lost Cities traversal nodes/s and realised batches per scheduler"};
  int traversals = 2000, repeats = 5;
  double latency_us = 100;
  std::string json_path;
  app.add_option("--traversals", traversals, "traversals per phase")->check(CLI::PositiveNumber);
  app.add_option("--repeats", repeats, "timed phases per configuration")->check(CLI::PositiveNumber);
  app.add_option("--latency-us", latency_us, "injected latency per forward for the hashed evaluator");
  app.add_option("--json", json_path, "write the rows as JSON");
  std::vector<std::string> only;
  app.add_option("--only", only, "run only these schedulers (repeatable)");
  CLI11_PARSE(app, argc, argv);

  register_builtin_schedulers();
  const LostCitiesTraversalGame game;
  const TraversalOptions opts;  // reference defaults: ε 0.05, cap 1000, average-strategy opponent
  const int W = game.input_width(), A = game.num_actions();

  struct Case {
    std::string scheduler;
    SchedulerOptions cfg;
  };
  const std::vector<Case> zero_cost = {
      {"recursive", {}},
      {"interleaved", {{"window", 16}, {"max_batch", 1024}}},
      {"interleaved", {{"window", 64}, {"max_batch", 1024}}},
      {"interleaved", {{"window", 256}, {"max_batch", 1024}}},
      {"waves", {{"window", 64}, {"max_batch", 1024}}},
      {"pooled", {{"window", 64}, {"max_batch", 1024}, {"threads", 1}}},
  };
  const std::vector<Case> latency = {
      {"recursive", {}},
      {"waves", {{"window", 64}, {"max_batch", 1024}}},
      {"interleaved", {{"window", 64}, {"max_batch", 1024}}},
      {"interleaved", {{"window", 256}, {"max_batch", 1024}}},
      {"interleaved", {{"window", 1024}, {"max_batch", 1024}}},
      {"pooled", {{"window", 1024}, {"max_batch", 1024}, {"threads", 2}}},
  };

  std::vector<Row> rows;
  auto run_case = [&](const std::string& ev_name, const Case& c, std::span<Evaluator* const> nets, int n) {
    if (!only.empty() && std::find(only.begin(), only.end(), c.scheduler) == only.end()) return;
    auto sched = make_scheduler(c.scheduler, c.cfg);
    TraversalJob job;
    job.iteration = 1;
    job.traverser = 0;
    // A phase of at least 8 windows, so that the window stays full for most of it; warm up with a
    // whole phase so that every context, arena and buffer exists before timing.
    n = std::max(n, 8 * opt(c.cfg, "window"));
    job.num_traversals = n;
    job.seed = 1;
    job.input_width = W;
    job.output_width = A;
    job.start = [&](TraversalContext& ctx) { return traverse(ctx, game, opts); };
    CountingSink sink;
    (void)sched->run(job, nets, sink);  // warm-up
    std::vector<double> nps;
    Row r{ev_name, c.scheduler, c.cfg};
    for (int rep = 0; rep < repeats; ++rep) {
      job.seed = 100 + static_cast<std::uint64_t>(rep);
      job.traverser = rep % 2;
      const RunStats st = sched->run(job, nets, sink);
      nps.push_back(st.nodes_per_second());
      r.mean_batch += st.batch.mean_batch() / repeats;
      r.forwards += st.batch.forwards / repeats;
      r.nodes_per_traversal += static_cast<double>(st.nodes) / st.traversals / repeats;
    }
    std::sort(nps.begin(), nps.end());
    r.median_nps = nps[nps.size() / 2];
    r.min_nps = nps.front();
    r.max_nps = nps.back();
    std::printf(
        "%-19s %-12s window %5d threads %d  %5d traversals  %9.0f nodes/s (%.0f–%.0f)  mean batch %6.1f = %5.1f%% of window\n",
        ev_name.c_str(), c.scheduler.c_str(), opt(c.cfg, "window"), opt(c.cfg, "threads"), n, r.median_nps, r.min_nps, r.max_nps,
        r.mean_batch, 100.0 * r.mean_batch / opt(c.cfg, "window"));
    std::fflush(stdout);
    rows.push_back(r);
  };

  {
    UniformEvaluator a(W, A), b(W, A), s(W, A);
    Evaluator* nets[kNumNets] = {&a, &b, &s};
    for (const auto& c : zero_cost) run_case("zero-cost", c, nets, traversals);
  }
  {
    HashEvaluator a(W, A, 1, latency_us), b(W, A, 2, latency_us), s(W, A, 3, latency_us);
    Evaluator* nets[kNumNets] = {&a, &b, &s};
    const std::string name = fmt::format("hash+{}us/forward", latency_us);
    for (const auto& c : latency) run_case(name, c, nets, traversals);
  }
  if (!json_path.empty()) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& r : rows)
      j.push_back({{"evaluator", r.evaluator},
                   {"scheduler", r.scheduler},
                   {"window", opt(r.cfg, "window")},
                   {"threads", opt(r.cfg, "threads")},
                   {"max_batch", opt(r.cfg, "max_batch")},
                   {"median_nodes_per_s", r.median_nps},
                   {"min_nodes_per_s", r.min_nps},
                   {"max_nodes_per_s", r.max_nps},
                   {"mean_batch", r.mean_batch},
                   {"forwards", r.forwards},
                   {"nodes_per_traversal", r.nodes_per_traversal}});
    std::ofstream(json_path) << j.dump(1) << "\n";
  }
  return 0;
}
