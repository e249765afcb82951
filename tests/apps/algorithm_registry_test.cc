// The algorithm registry (apps/run/algorithm_registry.h): a toy algorithm registered from the test
// tree runs through cfr-run's driver (run_training: training, resume, evaluation) like the
// built-in ones, and its section is a config section like theirs.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <unistd.h>  // getpid

#include "apps/players/checkpoint_policy.h"
#include "apps/run/algorithm_registry.h"
#include "apps/run/config.h"
#include "apps/train/driver.h"
#include "engine/core/errors.h"
#include "engine/games/games.h"
#include "engine/tabular/best_response.h"
#include "tests/apps/toy_algorithm.h"

namespace fs = std::filesystem;

namespace {

using cfr::test::metrics_of;

constexpr const char* kToyConfig = R"([algorithm]
name = "test_uniform"
[run]
game = "kuhn"
max_iterations = 3
[network]
hidden_size = 8
num_layers = 1
[evaluation]
eval_every = 2
[test_uniform]
steps = 7
)";

}  // namespace

TEST_CASE("the built-in algorithms are registered once, each with its section, networks and the network that plays") {
  cfr::register_builtin_algorithms();
  const auto names = cfr::algorithm_names();
  for (const char* name : {"deep_cfr", "escher", "mmd"}) CHECK(std::count(names.begin(), names.end(), name) == 1);
  const cfr::Config defaults = cfr::parse_config("", "defaults");  // every registered algorithm's section at its defaults
  CHECK(cfr::find_algorithm("mmd").networks(defaults, 10, 3).size() == 4);
  CHECK(cfr::find_algorithm("mmd")
            .networks(defaults, 10, 3)[static_cast<std::size_t>(cfr::find_algorithm("mmd").playing_network)]
            .name == "policy");
  CHECK(cfr::find_algorithm("escher").networks(defaults, 10, 3).size() == 4);
  CHECK(cfr::find_algorithm("deep_cfr")
            .networks(defaults, 10, 3)[static_cast<std::size_t>(cfr::find_algorithm("deep_cfr").playing_network)]
            .name == "strategy");
  CHECK(cfr::find_algorithm("deep_cfr").distributed);
  CHECK(cfr::find_algorithm("mmd").distributed);  // every built-in algorithm runs under mpirun
  CHECK(cfr::find_algorithm("escher").distributed);
  CHECK_THROWS_WITH_AS(cfr::find_algorithm("dream"), doctest::Contains("algorithm.name = 'dream'; valid: deep_cfr"),
                       cfr::InputError);
}

TEST_CASE("a toy algorithm registered from the tests trains, resumes and evaluates through cfr-run's driver") {
  cfr::test::register_uniform_algorithm();
  const fs::path dir = fs::temp_directory_path() / ("cfr-test-toy-algorithm-" + std::to_string(::getpid()));
  fs::remove_all(dir);

  cfr::Config cfg = cfr::parse_config(kToyConfig, "toy.toml");
  // Its section is the config's: --print-config shows it with its help, --set reaches it, bad values are refused.
  const std::string toml = cfr::to_toml(cfg);
  CHECK(toml.find("[test_uniform]\nsteps = 7  # test_uniform: a count") != std::string::npos);
  CHECK(toml.find("test_uniform (the tests' toy: the uniform policy)") != std::string::npos);
  CHECK_THROWS_WITH_AS(cfr::apply_override(cfg, "test_uniform.steps=0"),
                       doctest::Contains("test_uniform.steps = 0 is out of range"), cfr::InputError);
  CHECK_THROWS_WITH_AS(cfr::apply_override(cfg, "test_uniform.stride=2"), doctest::Contains("unknown key 'test_uniform.stride'"),
                       cfr::InputError);

  CHECK(cfr::run_training(cfg, {.run_dir = dir.string()}) == 3);
  auto m = metrics_of(dir);
  REQUIRE(m.size() == 3);
  CHECK(m[2]["iteration"] == 3);
  CHECK(m[2]["toy_steps"] == 21);
  CHECK_FALSE(m[0].contains("exploitability"));
  // The uniform policy's exact exploitability on Kuhn: NashConv 11/12, halved.
  CHECK(m[1]["exploitability"].get<double>() == doctest::Approx(11.0 / 24.0).epsilon(1e-5));
  CHECK(m[2]["exploitability"].get<double>() == doctest::Approx(11.0 / 24.0).epsilon(1e-5));
  CHECK(fs::exists(dir / "checkpoints" / "latest"));

  // Resume: the driver restores the latest checkpoint, says the resume is exact and continues.
  cfr::Config again = cfr::load_config((dir / "config.toml").string());
  cfr::apply_override(again, "run.max_iterations=5");
  CHECK(cfr::run_training(again, {.run_dir = dir.string(), .resume = true}) == 5);
  m = metrics_of(dir);
  REQUIRE(m.size() == 5);
  CHECK(m[3]["resume"]["from_iteration"] == 3);
  CHECK(m[3]["resume"]["exact"] == true);
  CHECK(m[4]["toy_steps"] == 35);

  // Evaluation as cfr-eval does it: the checkpoint's playing network (the registration's) as a policy.
  const cfr::CheckpointPolicy p = cfr::load_checkpoint_policy(dir.string());
  CHECK(p.iteration == 5);
  CHECK(cfr::exploitability(p.tabular(cfr::build_game_tree("kuhn"))).exploitability ==
        doctest::Approx(11.0 / 24.0).epsilon(1e-5));
  fs::remove_all(dir);
}
