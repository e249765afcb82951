// cfr-solve: tabular solvers on enumerable games, with exact NashConv along the way.
//   cfr-solve --game leduc --algo cfr+ --iterations 1000 --seed 0 --out leduc_cfr+.json [--report-every N]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>

#include <fmt/format.h>

#include "apps/cli.h"
#include "engine/core/files.h"
#include "engine/games/games.h"
#include "engine/tabular/best_response.h"
#include "engine/tabular/tabular_cfr.h"

int main(int argc, char** argv) {
  CLI::App app{"cfr-solve: tabular CFR, CFR+, linear CFR and MCCFR on Kuhn or Leduc poker"};
  std::string game, algo, out;
  int iterations = 1000, report_every = 0;
  std::uint64_t seed = 0;
  double os_epsilon = 0.6;
  // An empty value is refused (CLI11 would take it as "not given"); seeds are checked as a range
  // because CLI11 2.1 wraps "-1" and saturates values beyond 64 bits.
  app.add_option("--game", game, "kuhn or leduc")->required();
  app.add_option("--algo", algo, "cfr, cfr+, lcfr, es-mccfr or os-mccfr")->required();
  app.add_option("--iterations", iterations, "iterations (each updates both players)")
      ->check(cfr::kDecimal)
      ->check(cfr::kCountRange);
  app.add_option("--seed", seed, "RNG seed of the sampling algorithms")->check(cfr::kDecimal)->check(cfr::kSeedRange);
  app.add_option("--out", out, "write the average policy here (policy file, docs/policy-files.md)")->check(cfr::kNonEmpty);
  app.add_option("--report-every", report_every, "print NashConv every N iterations (default: 10 reports)")
      ->check(cfr::kDecimal)
      ->check(cfr::kCountRange);
  app.add_option("--os-epsilon", os_epsilon, "os-mccfr exploration, in (0, 1]")
      ->check(cfr::finite_range(0.0, 1.0, /*lo_open=*/true));
  if (const auto rc = cfr::parse_command_line(app, "cfr-solve", argc, argv)) return *rc;
  return cfr::run_app("cfr-solve", [&] {
    if (!out.empty()) cfr::require_output_file(out, "--out");  // checked before solving
    const cfr::GameTree tree = cfr::build_game_tree(game);
    cfr::TabularSolver solver(tree, {.algo = cfr::parse_tabular_algo(algo), .seed = seed, .os_epsilon = os_epsilon});
    if (report_every <= 0) report_every = std::max(1, iterations / 10);
    std::fprintf(stderr, "cfr-solve: %s, %d information sets, %d nodes; %s for %d iterations\n", game.c_str(),
                 tree.num_infosets(), tree.num_nodes(), algo.c_str(), iterations);
    const auto t0 = std::chrono::steady_clock::now();
    double solve_s = 0;
    for (int i = 1; i <= iterations; ++i) {
      const auto a = std::chrono::steady_clock::now();
      solver.run_iteration();
      solve_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count();
      if (i % report_every == 0 || i == iterations) {
        const auto r = cfr::exploitability(solver.average_policy());
        const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        const double eta = elapsed / i * (iterations - i);
        std::fprintf(stderr, "iter %7d/%d  NashConv %.6f  exploitability %.6f  value0 %+.6f  %.3f ms/iter  ETA %.1fs\n", i,
                     iterations, r.nash_conv, r.exploitability, r.on_policy_value[0], 1e3 * solve_s / i, eta);
      }
    }
    const auto avg = solver.average_policy();
    const auto r = cfr::exploitability(avg);
    std::cout << fmt::format(
        "{{\"game\":\"{}\",\"algo\":\"{}\",\"iterations\":{},\"nash_conv\":{:.9g},"
        "\"exploitability\":{:.9g},\"value0\":{:.9g},\"nodes_visited\":{},\"ms_per_iteration\":{:.4f}}}\n",
        game, algo, iterations, r.nash_conv, r.exploitability, r.on_policy_value[0], solver.nodes_visited(),
        1e3 * solve_s / iterations);
    if (!out.empty()) {
      cfr::write_policy_file(out, avg);
      std::fprintf(stderr, "cfr-solve: wrote %s\n", out.c_str());
    }
    return 0;
  });
}
