#include "apps/deep_cfr.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "apps/algorithms/deep_cfr/run_files.h"
#include "apps/algorithms/deep_cfr/trainer.h"
#include "apps/algorithms/mmd/trainer.h"
#include "apps/checkpoint_format.h"
#include "apps/distributed.h"
#include "engine/core/errors.h"
#include "engine/core/files.h"
#include "engine/games/games.h"
#include "engine/traversal/traversal_games.h"
#include "nets/networks.h"

namespace cfr {

namespace fs = std::filesystem;

namespace {

/// The selected scheduler's options, from [scheduler.<name>] (make_scheduler fills in the
/// declared defaults of any not there).
SchedulerOptions scheduler_options_of(const Config& c) {
  SchedulerOptions o;
  if (const auto it = c.scheduler_options.find(c.traversal.scheduler); it != c.scheduler_options.end())
    for (const auto& [key, value] : it->second) o.set(key, value);
  return o;
}

/// MMD's own options, from [mmd] (its cut-off value is traversal.cutoff_value_mode's).
MmdOptions mmd_options(const Config& c) {
  const auto& m = c.mmd;
  return {.rollouts_per_iteration = m.rollouts_per_iteration,
          .rollout = {.reward_scale = m.reward_scale, .gae_lambda = m.gae_lambda, .bot_share = m.bot_share,
                      .snapshot_share = m.snapshot_share, .bc_targets = m.bc_weight > 0, .max_actions = m.max_actions,
                      .magnet = m.magnet_weight > 0,
                      .cutoff = c.traversal.cutoff_value_mode == "score_diff" ? CutoffValue::kScoreDiff
                                : c.traversal.cutoff_value_mode == "zero"     ? CutoffValue::kZero
                                                                              : CutoffValue::kBotRollout},
          .epochs = m.epochs,
          .batch_size = m.batch_size,
          .terms = {.clip = m.clip, .magnet_weight = m.magnet_weight, .bc_weight = m.bc_weight, .entropy_weight = m.entropy_weight,
                    .normalize_advantage = m.normalize_advantages},
          .magnet_every = m.magnet_every,
          .bc_weight = m.bc_weight,
          .bc_fade_iterations = m.bc_fade_iterations,
          .snapshot_every = m.snapshot_every,
          .snapshots_kept = m.snapshots_kept,
          .capacity = m.capacity,
          .bot = m.bot};
}

}  // namespace

DeepCfrOptions deep_cfr_options(const Config& c) {
  const auto& t = c.traversal;
  const auto& op = c.optimization;
  const bool linear = c.weighting_mode == "lcfr";
  const TrainConfig base{.learning_rate = op.learning_rate, .weight_decay = op.weight_decay, .grad_clip = op.grad_clip,
                         .linear_weighting = linear, .ema_decay = op.ema_decay};
  TrainConfig adv = base, strat = base;
  adv.updates = op.advantage_updates_per_iteration;
  adv.batch_size = op.advantage_batch_size;
  adv.target_scale = op.advantage_target_scale;
  strat.updates = op.strategy_updates_per_iteration;
  strat.batch_size = op.strategy_batch_size;
  TrainConfig value = base;  // the value memory holds one iteration's samples: no weighting
  value.updates = c.escher.value_updates_per_iteration;
  value.batch_size = c.escher.value_batch_size;
  value.linear_weighting = false;
  const auto& e = c.escher;
  return {
      .algorithm = algorithm_from_name(c.algorithm.name),
      .seed = static_cast<std::uint64_t>(c.run.seed),
      .max_iterations = c.run.max_iterations,
      .max_minutes = c.run.max_minutes,
      .torch_threads = c.run.torch_threads,
      .experiment_name = c.run.experiment_name,
      .shape = checkpoint_shape(c),
      .network = {.hidden_size = c.network.hidden_size, .num_layers = c.network.num_layers,
                  .activation = c.network.activation, .device = c.run.device, .device_index = 0,
                  .invariant_chunk = c.network.invariant_chunk},
      .traversals_per_player = t.traversals_per_player,
      .traversal = {.kind = t.algorithm == "external_sampling" ? TraversalKind::kExternalSampling : TraversalKind::kOutcomeSampling,
                    .epsilon = t.outcome_sampling_epsilon,
                    .prob_floor = t.probability_floor,
                    .value_clip = t.outcome_sampling_value_clip,
                    .unsampled = t.outcome_unsampled_regret == "zero" ? UnsampledRegret::kZero : UnsampledRegret::kNegativeNodeValue,
                    .max_nodes = t.max_nodes_per_traversal,
                    .cutoff = t.cutoff_value_mode == "score_diff" ? CutoffValue::kScoreDiff
                              : t.cutoff_value_mode == "zero"     ? CutoffValue::kZero
                                                                  : CutoffValue::kBotRollout,
                    .opponent = t.opponent_policy == "average_strategy" ? OpponentPolicy::kAverageStrategy
                                : t.opponent_policy == "network"        ? OpponentPolicy::kNetwork
                                                                        : OpponentPolicy::kBot,
                    .fallback = c.all_negative_fallback == "argmax" ? RmFallback::kArgmax : RmFallback::kUniform,
                    .rm_epsilon = t.regret_matching_epsilon},
      .update_order = t.update_order == "alternating" ? UpdateOrder::kAlternating : UpdateOrder::kSimultaneous,
      .scheduler = t.scheduler,
      .scheduler_options = scheduler_options_of(c),
      .parallel_shares = t.parallel_shares,
      .escher = {.sampling_epsilon = e.sampling_epsilon,
                 .value_epsilon = e.value_epsilon,
                 .value_target = e.value_target == "importance_weighted" ? EscherValueTarget::kImportanceWeighted
                                                                         : EscherValueTarget::kReturn,
                 .value_clip = e.value_clip,
                 .max_nodes = t.max_nodes_per_traversal,
                 .cutoff = t.cutoff_value_mode == "score_diff" ? CutoffValue::kScoreDiff
                           : t.cutoff_value_mode == "zero"     ? CutoffValue::kZero
                                                               : CutoffValue::kBotRollout,
                 .fallback = c.all_negative_fallback == "argmax" ? RmFallback::kArgmax : RmFallback::kUniform,
                 .rm_epsilon = t.regret_matching_epsilon},
      .value_traversals = e.value_traversals,
      .value_training = value,
      .value_capacity = e.value_capacity,
      .reinitialize_value = e.reinitialize_value,
      .mmd = mmd_options(c),
      .advantage_training = adv,
      .strategy_training = strat,
      .learning_rate_decay_iterations = op.learning_rate_decay_iterations,
      .reinitialize_advantage = op.reinitialize_advantage,
      .linear_weighting = linear,
      .nonfinite = op.nonfinite_policy == "stop" ? NonfinitePolicy::kStop : NonfinitePolicy::kSkip,
      .advantage_capacity = c.memory.advantage_capacity,
      .strategy_capacity = c.memory.strategy_capacity,
      .pipe = {.capacity_blocks = c.memory.sample_pipe_blocks, .block_samples = c.memory.sample_block_samples},
      .check_ram = c.memory.check_ram,
      .merge_duplicates = c.memory.merge_duplicates,
      .eval_every = c.evaluation.eval_every,
      .eval_games = c.evaluation.games,
      .eval_opponents = c.evaluation.opponents,
      .eval_play = c.evaluation.play == "sampled" ? PlayMode::kSampled : PlayMode::kGreedy,
      .eval_max_steps = c.evaluation.max_steps,
      .rules = c.rules,
      .save_every = c.checkpoint.save_every,
      .include_memories = c.checkpoint.include_memories,
      .keep_snapshots = c.checkpoint.keep_snapshots,
      .distributed_timeout_seconds = c.distributed.timeout_seconds,
  };
}

void apply_test_faults(DeepCfrOptions& o, const char* spec) {
  if (spec == nullptr || *spec == '\0') return;
  const std::string text(spec);
  std::size_t at = 0;
  while (at <= text.size()) {
    const std::size_t end = std::min(text.find(',', at), text.size());
    const std::string item = text.substr(at, end - at);
    const std::size_t eq = item.find('=');
    const std::string key = item.substr(0, eq), value = eq == std::string::npos ? "" : item.substr(eq + 1);
    int* field = key == "nonfinite_target_iteration"    ? &o.nonfinite_target_iteration
                 : key == "nonfinite_weights_iteration" ? &o.nonfinite_weights_iteration
                                                        : nullptr;
    if (field == nullptr || value.empty() || value.find_first_not_of("0123456789") != std::string::npos || value.size() > 8)
      throw InputError(fmt::format("{}='{}': '{}' is not KEY=ITERATION with KEY nonfinite_target_iteration or "
                                   "nonfinite_weights_iteration", kTestFaultsVariable, text, item));
    *field = std::stoi(value);
    at = end + 1;
  }
}

namespace {

/// What a resume continues with, compared with what its checkpoint was trained with: refuses
/// changed training keys unless allowed, and says whether the resumed run is the run that an
/// uninterrupted one would have been (the checkpoint saved the memories, no training key changed).
struct ResumeReport {
  bool exact = true;
  std::vector<std::string> reasons;  // why not exact
  nlohmann::json changes = nlohmann::json::array();
};
ResumeReport compare_resume(Config& cfg, Config& trained_with, bool memories, int iteration, bool allow_training_changes,
                            const std::string& run_dir) {
  ResumeReport r;
  std::vector<std::string> training;
  for (const auto& c : config_changes(trained_with, cfg)) {
    r.changes.push_back({{"key", c.key}, {"before", c.before}, {"after", c.after}, {"training", c.training}});
    if (c.training) training.push_back(fmt::format("{} {} → {}", c.key, c.before, c.after));
  }
  if (!training.empty() && !allow_training_changes)
    throw InputError(fmt::format(
        "--resume {}: the checkpoint of iteration {} was trained with other values of keys that change what the run "
        "computes: {}; the resumed run would not be the same run. Resume without these changes, or pass "
        "--allow-training-changes to continue with them anyway",
        run_dir, iteration, join_names(training)));
  if (!memories) {
    r.exact = false;
    r.reasons.push_back("the checkpoint has no memories (checkpoint.include_memories = false): they restart empty");
  }
  if (!training.empty()) {
    r.exact = false;
    r.reasons.push_back("training keys changed (--allow-training-changes): " + join_names(training));
  }
  return r;
}

/// The learner (or a single process): prepares the run directory, restores a resumed run's
/// latest checkpoint and says what the resume is, then trains.
int learn(Trainer& trainer, Config& cfg, const RunOptions& opts, const std::string& config_toml) {
  const fs::path run_dir(opts.run_dir);
  if (!opts.resume && fs::exists(run_dir / "metrics.jsonl"))
    throw InputError(fmt::format("run directory {} already holds a run (metrics.jsonl); choose another --run-dir "
                                 "or continue it with --resume {}", opts.run_dir, opts.run_dir));
  if (opts.resume) require_directory(opts.run_dir, "--resume");
  fs::create_directories(run_dir);
  if (!opts.resume) {
    write_file_atomic((run_dir / "config.toml").string(), config_toml);
    write_part_config(opts.run_dir, config_toml, "first start");
    return trainer.train(1, nullptr, "");
  }
  // Leftovers of a checkpoint write that a crash interrupted (.tmp-* directories, *.tmp files).
  const fs::path checkpoints = run_dir / "checkpoints";
  if (fs::is_directory(checkpoints))
    for (const auto& e : fs::directory_iterator(checkpoints)) {
      const std::string name = e.path().filename().string();
      if (name.rfind(".tmp-", 0) == 0 || (name.size() > 4 && name.ends_with(".tmp"))) fs::remove_all(e.path());
    }
  int from = 0;
  ResumeReport report;
  if (fs::exists(checkpoints / "latest")) {  // else killed before its first checkpoint: start over
    const std::string ck = latest_checkpoint_dir(opts.run_dir);
    from = trainer.restore(ck);  // in memory only: a refused resume below leaves the directory as it was
    Config trained_with = load_config((fs::path(ck) / "config.toml").string());
    const bool memories = !trainer.resume_needs_memories() || fs::exists(fs::path(ck) / "memories.bin");
    report = compare_resume(cfg, trained_with, memories, from, opts.allow_training_changes, opts.run_dir);
  }
  const std::string verdict =
      from == 0      ? "the run had no checkpoint yet: restarting from iteration 1"
      : report.exact ? fmt::format("resumed from the checkpoint of iteration {}: exact ({}no training key changed: the "
                                   "same run as an uninterrupted one)", from,
                                   trainer.resume_needs_memories() ? "memories saved, " : "")
                     : fmt::format("resumed from the checkpoint of iteration {}: NOT exact: {}", from, join_names(report.reasons));
  const int part = write_part_config(opts.run_dir, config_toml, verdict);
  write_file_atomic((run_dir / "config.toml").string(), config_toml);
  trim_metrics((run_dir / "metrics.jsonl").string(), from);
  const nlohmann::json record = {{"resume", {{"part", part}, {"from_iteration", from}, {"exact", from > 0 && report.exact},
                                             {"not_exact_because", report.reasons}, {"changed_keys", report.changes}}}};
  return trainer.train(from + 1, record, "cfr-run: " + verdict);
}

}  // namespace

GameSettings game_settings(const Config& cfg) {
  if (cfg.algorithm.name == "mmd")  // mmd.bot: the opponent of bot_share, the teacher of bc_weight, the cut-off rollouts
    return {.rules = cfg.rules, .encoding = cfg.encoding,
            .opponent_bot = cfg.mmd.bc_weight > 0 || cfg.mmd.bot_share > 0 || cfg.traversal.cutoff_value_mode == "bot_rollout"
                                ? cfg.mmd.bot
                                : std::string()};
  return {.rules = cfg.rules, .encoding = cfg.encoding,
          .opponent_bot = cfg.traversal.opponent_policy == "bot" || cfg.traversal.cutoff_value_mode == "bot_rollout"
                              ? cfg.traversal.opponent_bot
                              : std::string()};
}

std::pair<int, int> game_widths(const Config& cfg) { return traversal_widths(cfg.run.game, game_settings(cfg)); }

int run_deep_cfr(Config& cfg, const RunOptions& opts) {
  validate(cfg);
  DeepCfrOptions options = deep_cfr_options(cfg);
  apply_test_faults(options, std::getenv(kTestFaultsVariable));
  const bool learner = opts.dist == nullptr || opts.dist->learner();
  if (learner) {
    const auto [W, A] = game_widths(cfg);
    check_memories_fit(options, W, A, cfg.source);
  }
  const std::string config_toml = to_toml(cfg);
  // The networks exist (a bad device is refused) before the run directory is touched.
  const TrainerIo io{.run_dir = opts.run_dir, .config_toml = config_toml, .stop = opts.stop, .progress = opts.progress,
                     .dist = opts.dist};
  auto trainer = options.algorithm == Algorithm::kMmd ? make_mmd_trainer(options, io, game_settings(cfg))
                                                      : make_deep_cfr_trainer(options, io, game_settings(cfg));
  if (!learner) return trainer->serve_learner();
  return learn(*trainer, cfg, opts, config_toml);
}

}  // namespace cfr
