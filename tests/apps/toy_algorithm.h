#pragma once
// A toy training algorithm registered from the test tree (docs/architecture.md "Adding an
// algorithm"): "test_uniform" plays the uniform policy (a one-network set whose weights are all
// 0: equal logits) on an enumerable game. Its one option, [test_uniform] steps, shows that a
// declared key reaches the trainer typed; its trainer writes metrics.jsonl, checkpoints and
// evaluations through the shared machinery (apps/algorithms/run_steps.h), and cfr-run's driver
// (run_training) runs, resumes and checks it like any algorithm.
#include <fstream>
#include <memory>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "apps/algorithms/deep_cfr/evaluation.h"
#include "apps/algorithms/deep_cfr/run_files.h"
#include "apps/algorithms/registry.h"
#include "apps/algorithms/run_steps.h"
#include "apps/algorithms/trainer.h"
#include "apps/checkpoint_format.h"
#include "apps/config.h"
#include "engine/core/errors.h"
#include "engine/games/games.h"
#include "engine/tabular/best_response.h"
#include "engine/tabular/game_tree.h"
#include "nets/networks.h"

namespace cfr::test {

class UniformTrainer final : public Trainer {
 public:
  UniformTrainer(const TrainerSetup& s, int input_width, int num_actions)
      : run_(s.run), io_(s.io), steps_(s.config.algorithm_options.at("test_uniform").integer("steps")),
        nets_(s.algorithm.networks(input_width, num_actions), s.run.network, s.run.seed),
        tree_(build_game_tree(s.run.shape.game)) {}

  int restore(const std::string& ck) override {
    const CheckpointMeta meta = read_checkpoint_meta(ck, run_.shape, nets_.specs());
    nets_.load(ck + "/nets.pt");
    latest_ = meta.iteration;
    return meta.iteration;
  }
  bool resume_needs_memories() const override { return false; }

  int train(int first, nlohmann::json first_metrics, const std::string&) override {
    MetricsFile metrics(io_.run_dir + "/metrics.jsonl");
    latest_ = first - 1;
    auto say = [](const std::string&) {};
    return run_iterations({.first = first, .last = run_.max_iterations, .max_minutes = run_.max_minutes,
                           .started = std::chrono::steady_clock::now(), .stop = io_.stop, .say = say,
                           .latest_checkpoint = [this] { return latest_; }, .wait = [] {}},
                          [&](int it) {
                            // The step of the algorithm: every weight 0, so every action's logit is equal.
                            nets_.set_weights(0, std::vector<float>(static_cast<std::size_t>(nets_.parameters(0)), 0.0f));
                            nlohmann::json m = {{"iteration", it}, {"toy_steps", steps_ * it}};
                            if (!first_metrics.is_null()) m.update(std::exchange(first_metrics, nullptr));
                            if ((run_.eval_every > 0 && it % run_.eval_every == 0) || it == run_.max_iterations)
                              m["exploitability"] = exploitability(strategy_policy(tree_, nets_.evaluator(0))).exploitability;
                            metrics.append(m.dump() + "\n");
                            write_checkpoint_dir(nets_, {.run_dir = io_.run_dir, .iteration = it, .config_toml = io_.config_toml,
                                                         .shape = run_.shape, .train_rng = Rng(run_.seed).state(),
                                                         .write_memories = nullptr, .save_every = run_.save_every,
                                                         .previous_latest = latest_});
                            latest_ = it;
                          });
  }

 private:
  const RunOptions run_;
  const TrainerIo io_;
  const std::int64_t steps_;
  NetworkSet nets_;
  const GameTree tree_;
  int latest_ = 0;
};

inline std::unique_ptr<Trainer> make_uniform_trainer(const TrainerSetup& s) {
  if (!is_enumerable(s.run.shape.game))
    throw InputError(fmt::format("algorithm.name = 'test_uniform' is for enumerable games; this run's is '{}'", s.run.shape.game));
  const auto [W, A] = traversal_widths(s.run.shape.game, s.game);
  return std::make_unique<UniformTrainer>(s, W, A);
}

/// Registers "test_uniform" (with its trainer).
inline void register_uniform_algorithm() {
  register_algorithm({
      .name = "test_uniform",
      .description = "test_uniform (the tests' toy: the uniform policy)",
      .options = {integer_option("steps", 1, 1, 1000, "a count the trainer writes as toy_steps = steps * iteration")},
      .networks = [](int W, int A) {
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

}  // namespace cfr::test
