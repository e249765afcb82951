#include "apps/run/options.h"

#include "apps/run/config.h"
#include "engine/games/games.h"

namespace cfr {

namespace {

/// The selected scheduler's options, from [scheduler.<name>] (make_scheduler fills in the
/// declared defaults of any not there).
SchedulerOptions scheduler_options_of(const Config& c) {
  SchedulerOptions o;
  if (const auto it = c.scheduler_options.find(c.traversal.scheduler); it != c.scheduler_options.end())
    for (const auto& [key, value] : it->second) o.set(key, value);
  return o;
}

}  // namespace

CutoffValue cutoff_value(const Config& c) {
  const auto& mode = c.traversal.cutoff_value_mode;
  return mode == "score_diff" ? CutoffValue::kScoreDiff : mode == "zero" ? CutoffValue::kZero : CutoffValue::kBotRollout;
}

RmFallback rm_fallback(const Config& c) {
  return c.all_negative_fallback == "argmax" ? RmFallback::kArgmax : RmFallback::kUniform;
}

RunOptions run_options(const Config& c) {
  const auto& op = c.optimization;
  return {
      .seed = static_cast<std::uint64_t>(c.run.seed),
      .max_iterations = c.run.max_iterations,
      .max_minutes = c.run.max_minutes,
      .torch_threads = c.run.torch_threads,
      .experiment_name = c.run.experiment_name,
      .shape = checkpoint_shape(c),
      .network = {.hidden_size = c.network.hidden_size,
                  .num_layers = c.network.num_layers,
                  .activation = c.network.activation,
                  .device = c.run.device,
                  .device_index = 0,
                  .invariant_chunk = c.network.invariant_chunk,
                  .precision = c.network.precision},
      .scheduler = c.traversal.scheduler,
      .scheduler_options = scheduler_options_of(c),
      .pipe = {.capacity_blocks = c.memory.sample_pipe_blocks, .block_samples = c.memory.sample_block_samples},
      .check_ram = c.memory.check_ram,
      .training = {.learning_rate = op.learning_rate,
                   .weight_decay = op.weight_decay,
                   .grad_clip = op.grad_clip,
                   .linear_weighting = c.weighting_mode == "lcfr",
                   .ema_decay = op.ema_decay},
      .learning_rate_decay_iterations = op.learning_rate_decay_iterations,
      .nonfinite = op.nonfinite_policy == "stop" ? NonfinitePolicy::kStop : NonfinitePolicy::kSkip,
      .eval_every = c.evaluation.eval_every,
      .eval_games = c.evaluation.games,
      .eval_opponents = c.evaluation.opponents,
      .eval_play = c.evaluation.play == "sampled" ? PlayMode::kSampled : PlayMode::kGreedy,
      .eval_max_steps = c.evaluation.max_steps,
      .rules = c.rules,
      .save_every = c.checkpoint.save_every,
      .include_memories = c.checkpoint.include_memories,
      .distributed_timeout_seconds = c.distributed.timeout_seconds,
      .distributed_learners = c.distributed.learners,
  };
}

GameSettings game_settings(const Config& cfg) {
  const AlgorithmInfo algorithm = find_algorithm(cfg.algorithm.name);
  return {.rules = cfg.rules,
          .encoding = cfg.encoding,
          .opponent_bot = algorithm.opponent_bot ? algorithm.opponent_bot(cfg)
                          : cfg.traversal.opponent_policy == "bot" || cfg.traversal.cutoff_value_mode == "bot_rollout"
                              ? cfg.traversal.opponent_bot
                              : std::string(),
          .league_bots = {}};
}

std::pair<int, int> game_widths(const Config& cfg) { return traversal_widths(cfg.run.game, game_settings(cfg)); }

}  // namespace cfr
