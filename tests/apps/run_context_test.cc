// The run context every trainer composes (apps/algorithms/context.h): the same end of a run,
// the same numeric-fault and loss keys whatever the algorithm.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <unistd.h>  // getpid

#include "apps/algorithms/context.h"
#include "apps/run/algorithm_registry.h"
#include "apps/run/config.h"
#include "apps/train/driver.h"
#include "tests/apps/toy_algorithm.h"

namespace fs = std::filesystem;

namespace {

using cfr::test::metrics_of;

/// A small Kuhn run of `algorithm` into a fresh directory of its own (test cases run in parallel
/// processes); returns its metrics lines.
std::vector<nlohmann::json> small_kuhn_run(const std::string& tag, const std::string& algorithm,
                                           const std::vector<std::string>& sets) {
  const fs::path dir =
      fs::temp_directory_path() / ("cfr-test-run-context-" + tag + "-" + algorithm + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  cfr::Config cfg = cfr::parse_config(R"([run]
game = "kuhn"
[network]
hidden_size = 8
num_layers = 1
[traversal]
traversals_per_player = 20
[optimization]
advantage_updates_per_iteration = 4
strategy_updates_per_iteration = 4
advantage_batch_size = 32
strategy_batch_size = 32
[escher]
value_traversals = 20
value_updates_per_iteration = 4
value_batch_size = 32
[mmd]
rollouts_per_iteration = 32
batch_size = 32
)",
                                      "small_kuhn.toml");
  cfr::apply_override(cfg, "algorithm.name=" + algorithm);
  for (const auto& s : sets) cfr::apply_override(cfg, s);
  const int done = cfr::run_training(cfg, {.run_dir = dir.string()});
  auto lines = metrics_of(dir);
  CHECK(static_cast<int>(lines.size()) == done);
  fs::remove_all(dir);
  return lines;
}

}  // namespace

TEST_CASE("a run stopped by its time budget ends with an evaluation whatever the algorithm") {
  cfr::test::register_uniform_algorithm();
  for (const std::string algorithm : {"deep_cfr", "escher", "mmd", "test_uniform"}) {
    CAPTURE(algorithm);
    // 1000 iterations, an evaluation every 1000, 30 ms: the budget ends the run after its first iterations.
    const auto m =
        small_kuhn_run("budget", algorithm, {"run.max_iterations=1000", "evaluation.eval_every=1000", "run.max_minutes=0.0005"});
    REQUIRE(!m.empty());
    CHECK(m.size() < 1000);
    CHECK(m.back().contains("exploitability"));
    CHECK(m.back()["exploitability"].get<double>() > 0);
  }
}

TEST_CASE("every trainer reports numeric faults and losses under its networks' names with the same fields") {
  cfr::test::register_uniform_algorithm();
  for (const std::string algorithm : {"deep_cfr", "escher", "mmd", "test_uniform"}) {
    CAPTURE(algorithm);
    const auto m = small_kuhn_run("keys", algorithm, {"run.max_iterations=1"});
    REQUIRE(m.size() == 1);
    std::set<std::string> networks;
    for (const auto& spec : cfr::find_algorithm(algorithm).networks(cfr::parse_config("", "defaults"), 11, 2))
      networks.insert(spec.name);
    std::set<std::string> reported;
    for (const auto& [name, faults] : m[0]["nonfinite"].items()) {
      reported.insert(name);
      std::set<std::string> fields;
      for (const auto& [field, value] : faults.items()) fields.insert(field);
      CHECK(fields == std::set<std::string>{"outputs", "samples_dropped", "steps_skipped", "weights_finite"});
      CHECK(faults["outputs"] == 0);
      CHECK(faults["weights_finite"] == true);
    }
    CHECK(reported == networks);
    REQUIRE(m[0].contains("losses"));
    for (const auto& [name, loss] : m[0]["losses"].items()) {
      CHECK(networks.count(name) == 1);
      CHECK(loss.is_number());
    }
  }
}

TEST_CASE("the progress bar counts in 64 bits past 71.6 million traversals") {
  CHECK(cfr::progress_bar(80'000'000, 100'000'000) == std::string(24, '#'));  // 30 × 80 M overflows int
  CHECK(cfr::progress_bar(100'000'000, 100'000'000) == std::string(30, '#'));
  CHECK(cfr::progress_bar(1, 3) == std::string(10, '#'));
  CHECK(cfr::progress_bar(0, 100).empty());
  CHECK(cfr::progress_bar(5, 0).empty());
}
