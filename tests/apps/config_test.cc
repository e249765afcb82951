// cfr-run's configuration: every shipped config parses; bad input names file, line, key, choices.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "apps/run/config.h"
#include "engine/core/errors.h"

using namespace cfr;

namespace {
std::string dir() { return CFR_TEST_DATA_DIR; }
std::string error_of(const std::string& file) {
  try {
    Config c = load_config(dir() + "/data/configs/" + file);
    validate(c);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("every shipped config parses, validates and prints back to an equivalent config") {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir() + "/../configs")) {
    if (e.path().extension() != ".toml") continue;
    INFO(e.path().string());
    Config c = load_config(e.path().string());
    CHECK_NOTHROW(validate(c));
    const std::string printed = to_toml(c);
    const std::string tmp = "printed_" + e.path().filename().string();
    { std::ofstream(tmp) << printed; }
    Config again = load_config(tmp);
    CHECK(to_toml(again) == printed);
    std::filesystem::remove(tmp);
    ++n;
  }
  CHECK(n >= 6);
}

TEST_CASE("the default config has the reference's sizes and the best measured recipe") {
  Config c = load_config(dir() + "/../configs/default.toml");
  CHECK(c.traversal.outcome_unsampled_regret == "negative_node_value");
  CHECK(c.network.hidden_size == 512);
  CHECK(c.network.num_layers == 3);
  CHECK(c.traversal.traversals_per_player == 280);
  CHECK(c.optimization.advantage_updates_per_iteration == 512);
  CHECK(c.optimization.advantage_batch_size == 1024);
  CHECK(c.memory.advantage_capacity == 2'000'000);
}

TEST_CASE("configs/reference.toml keeps the reference's recipe") {
  Config c = load_config(dir() + "/../configs/reference.toml");
  CHECK(c.network.hidden_size == 512);
  CHECK(c.network.num_layers == 3);
  CHECK(c.traversal.traversals_per_player == 280);
  CHECK(c.traversal.outcome_unsampled_regret == "zero");
  CHECK(c.traversal.cutoff_value_mode == "score_diff");
  CHECK(c.optimization.advantage_updates_per_iteration == 512);
  CHECK(c.optimization.advantage_batch_size == 1024);
  CHECK(c.optimization.advantage_target_scale == 1.0);
  CHECK(c.memory.advantage_capacity == 2'000'000);
}

TEST_CASE("each scheduler's options live in [scheduler.<name>] and the old shared keys name their new home") {
  Config c = parse_config("[traversal]\nscheduler = \"pooled\"\n[scheduler.pooled]\nthreads = 3\nwindow = 96\n", "t.toml");
  CHECK(c.scheduler_options["pooled"]["threads"] == 3);
  CHECK(c.scheduler_options["pooled"]["window"] == 96);
  CHECK(c.scheduler_options["pooled"]["deadline_us"] == 0);  // declared default
  CHECK(c.scheduler_options["interleaved"]["window"] == 64);
  apply_override(c, "scheduler.pooled.deadline_us=250");
  CHECK(c.scheduler_options["pooled"]["deadline_us"] == 250);
  CHECK(to_toml(c).find("[scheduler.pooled]\nthreads = 3") != std::string::npos);
  auto error = [](const std::string& text) {
    try {
      (void)parse_config(text, "t.toml");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  CHECK(error("[traversal]\ninterleave_width = 8\n") ==
        "t.toml:2: traversal.interleave_width is no longer a key: the window is a scheduler's option: "
        "scheduler.<name>.window, e.g. [scheduler.interleaved] window = 64");
  CHECK(error("[traversal]\nnum_workers = 2\n").find("[scheduler.pooled] threads = N") != std::string::npos);
  CHECK(error("[scheduler.fifo]\nwindow = 2\n")
            .find("t.toml:1: unknown section [scheduler.fifo]; [scheduler] holds one table "
                  "per registered scheduler with options: interleaved, pooled, waves") != std::string::npos);
  CHECK(error("[scheduler.interleaved]\nthreads = 2\n")
            .find("unknown key 'scheduler.interleaved.threads'; valid keys in "
                  "[scheduler.interleaved]: window, max_batch") != std::string::npos);
  CHECK(error("[scheduler.pooled]\nthreads = 0\n").find("scheduler.pooled.threads = 0 is out of range [1, 1024]") !=
        std::string::npos);
  // A changed scheduler option is operational: a resume may change it.
  Config a, b;
  apply_override(b, "scheduler.interleaved.window=8");
  const auto changes = config_changes(a, b);
  REQUIRE(changes.size() == 1);
  CHECK(changes[0].key == "scheduler.interleaved.window");
  CHECK_FALSE(changes[0].training);
}

TEST_CASE("config errors name the file, the line, the key and the valid choices") {
  CHECK(error_of("unknown_key.toml").find("unknown_key.toml:6: unknown key 'traversal.schedular'; valid keys in [traversal]:") !=
        std::string::npos);
  CHECK(error_of("bad_type.toml").find("bad_type.toml:2: network.hidden_size must be an integer") != std::string::npos);
  CHECK(error_of("out_of_range.toml")
            .find("out_of_range.toml:2: traversal.outcome_sampling_epsilon = 1.5 is out of range [0, 1]") != std::string::npos);
  CHECK(error_of("bad_choice.toml")
            .find("traversal.scheduler = 'fifo'; registered schedulers: interleaved, pooled, recursive, waves") !=
        std::string::npos);
  CHECK(error_of("bad_syntax.toml").find("bad_syntax.toml:1: TOML syntax error") != std::string::npos);
  CHECK(error_of("unknown_section.toml").find("unknown_section.toml:1: unknown section [trainer]; valid sections: run, rules") !=
        std::string::npos);
  CHECK(error_of("missing.toml").find("missing.toml") != std::string::npos);
}

TEST_CASE("--set overrides parse values as TOML, else as strings, and are checked like the file") {
  Config c;
  apply_override(c, "traversal.traversals_per_player=12");
  apply_override(c, "traversal.scheduler=pooled");
  apply_override(c, "run.max_minutes=0.5");
  apply_override(c, "evaluation.opponents=[\"random\"]");
  CHECK(c.traversal.traversals_per_player == 12);
  CHECK(c.traversal.scheduler == "pooled");
  CHECK(c.run.max_minutes == 0.5);
  CHECK(c.evaluation.opponents == std::vector<std::string>{"random"});
  CHECK_THROWS_WITH_AS(apply_override(c, "traversal.width=3"), doctest::Contains("unknown key 'traversal.width'"), InputError);
  CHECK_THROWS_WITH_AS(apply_override(c, "network.hidden_size=-4"), doctest::Contains("out of range"), InputError);
  CHECK_THROWS_WITH_AS(apply_override(c, "nodot=3"), doctest::Contains("expected section.key=value"), InputError);
  apply_override(c, "traversal.update_order=alternating");
  apply_override(c, "optimization.ema_decay=0.99");
  CHECK(c.traversal.update_order == "alternating");
  CHECK(c.optimization.ema_decay == 0.99);
  CHECK_THROWS_WITH_AS(apply_override(c, "traversal.update_order=random"), doctest::Contains("valid: simultaneous, alternating"),
                       InputError);
  CHECK_THROWS_WITH_AS(apply_override(c, "optimization.ema_decay=1.0"), doctest::Contains("out of range"), InputError);
}

TEST_CASE("strings with quotes, backslashes and control characters print as TOML that parses back to them") {
  Config c;
  apply_override(c, "run.experiment_name=a\"b");  // not TOML: taken as the string a"b
  CHECK(c.run.experiment_name == "a\"b");
  const std::string policy = "checkpoint:C:\\runs\\it's \"best\"\tnow";
  const std::vector<std::string> opponents = {"checkpoint:/runs/x\"y", "checkpoint:back\\slash\\", "line\nbreak\x01\x7f", "é"};
  c.algorithm_options["mmd"].values["initial_policy"] = policy;
  c.algorithm_options["mmd"].values["opponents"] = opponents;
  c.evaluation.opponents = {"a\\\"b"};
  const std::string printed = to_toml(c);
  Config again = parse_config(printed, "printed.toml");
  CHECK(again.run.experiment_name == "a\"b");
  CHECK(again.algorithm_options["mmd"].text("initial_policy") == policy);
  CHECK(again.algorithm_options["mmd"].list("opponents") == opponents);
  CHECK(again.evaluation.opponents == std::vector<std::string>{"a\\\"b"});
  CHECK(to_toml(again) == printed);
  CHECK(printed.find("experiment_name = \"a\\\"b\"") != std::string::npos);
}

TEST_CASE("a float where an integer is expected is refused, however large (found by fuzz_config)") {
  for (const char* text : {"[evaluation]\ngames = 111111111111111111111111110.4\n", "[run]\nseed = 1e300\n",
                           "[run]\nmax_iterations = nan\n", "[run]\nmax_iterations = 3.0\n"}) {
    CAPTURE(text);
    CHECK_THROWS_WITH_AS(parse_config(text, "f.toml"), doctest::Contains("must be an integer"), InputError);
  }
  Config c;
  CHECK_THROWS_WITH_AS(apply_override(c, "evaluation.games=1e40"), doctest::Contains("must be an integer"), InputError);
}
