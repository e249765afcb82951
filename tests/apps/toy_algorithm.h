#pragma once
// A toy training algorithm registered from the test tree (docs/architecture.md "Adding an
// algorithm"): "test_uniform" plays the uniform policy (a one-network set whose weights are all
// 0: equal logits) on an enumerable game. Its one option, [test_uniform] steps, shows that a
// declared key reaches the trainer typed; its trainer keeps only its own step and composes the run
// context (apps/algorithms/context.h) for the log, metrics.jsonl, the evaluation, the
// numeric-fault report and checkpoints; cfr-run's driver (run_training) runs, resumes and checks
// it like any algorithm.
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "apps/algorithms/context.h"
#include "apps/algorithms/trainer.h"
#include "apps/run/algorithm_registry.h"
#include "apps/run/checkpoint_format.h"
#include "apps/run/config.h"
#include "engine/core/errors.h"
#include "engine/games/games.h"
#include "engine/tabular/game_tree.h"
#include "nets/networks.h"

namespace cfr::test {

class UniformTrainer final : public Trainer {
 public:
  UniformTrainer(const TrainerSetup& s, int input_width, int num_actions)
      : run_(s.run),
        steps_(s.config.algorithm_options.at("test_uniform").integer("steps")),
        nets_(s.algorithm.networks(s.config, input_width, num_actions), s.run.network, s.run.seed),
        tree_(build_game_tree(s.run.shape.game)),
        ctx_(s.run, s.io) {}

  int restore(const std::string& ck) override {
    const CheckpointMeta meta = read_checkpoint_meta(ck, run_.shape, nets_.specs());
    nets_.load(ck + "/nets.pt");
    return meta.iteration;
  }
  bool resume_needs_memories() const override { return false; }

  int train(int first, nlohmann::json first_metrics, const std::string& note) override {
    ctx_.start(first, fmt::format("test_uniform on {}", run_.shape.game), note);
    return ctx_.run(
        [&](int it) {
          ctx_.begin_iteration(it, std::exchange(first_metrics, nullptr));
          // The algorithm's step: every weight 0, so every action's logit is equal.
          nets_.set_weights(0, std::vector<float>(static_cast<std::size_t>(nets_.parameters(0)), 0.0f));
          ctx_.metrics()["toy_steps"] = steps_ * it;
          ctx_.record_loss(nets_.spec(0).name, 0.0);
          ctx_.collect_numeric_faults(nets_, {});
          ctx_.evaluate(nets_.evaluator(0), 0, &tree_);
          ctx_.write_metrics();
          ctx_.check_numeric_faults();
          ctx_.write_checkpoint(nets_, Rng(run_.seed).state());
          ctx_.print_iteration("uniform");
        },
        [] {});
  }

 private:
  const RunOptions run_;
  const std::int64_t steps_;
  NetworkSet nets_;
  const GameTree tree_;
  RunContext ctx_;
};

inline std::unique_ptr<Trainer> make_uniform_trainer(const TrainerSetup& s) {
  if (!is_enumerable(s.run.shape.game))
    throw InputError(
        fmt::format("algorithm.name = 'test_uniform' is for enumerable games; this run's is '{}'", s.run.shape.game));
  const auto [W, A] = traversal_widths(s.run.shape.game, s.game);
  return std::make_unique<UniformTrainer>(s, W, A);
}

/// Registers "test_uniform" (with its trainer).
inline void register_uniform_algorithm() {
  register_algorithm({
      .name = "test_uniform",
      .description = "test_uniform (the tests' toy: the uniform policy)",
      .options = {integer_option("steps", 1, 1, 1000, "a count the trainer writes as toy_steps = steps * iteration")},
      .networks =
          [](const Config&, int W, int A) {
            return NetworkSpecs{{.name = "policy", .input_width = W, .output_width = A, .loss = NetLoss::kSoftCrossEntropy}};
          },
      .playing_network = 0,
      .validate = nullptr,
      .memory = nullptr,
      .opponent_bot = nullptr,
      .distributed = false,
      .advantage_snapshots = false,
      .make_trainer = make_uniform_trainer,
  });
}

/// A run's metrics.jsonl, one JSON object per line (the run tests read their runs with it).
inline std::vector<nlohmann::json> metrics_of(const std::filesystem::path& run_dir) {
  std::ifstream in(run_dir / "metrics.jsonl");
  std::vector<nlohmann::json> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(nlohmann::json::parse(line));
  return lines;
}

}  // namespace cfr::test
