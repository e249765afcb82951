#include "apps/train/driver.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "apps/algorithms/trainer.h"
#include "apps/players/checkpoint_policy.h"
#include "apps/run/algorithm_registry.h"
#include "apps/run/checkpoint_format.h"
#include "apps/run/distributed.h"
#include "apps/run/run_files.h"
#include "apps/train/trainers.h"
#include "engine/core/errors.h"
#include "engine/core/files.h"
#include "engine/core/resources.h"
#include "engine/games/games.h"
#include "engine/traversal/traversal_games.h"
#include "nets/networks.h"

namespace cfr {

namespace fs = std::filesystem;

void check_memories_fit(const Config& cfg, int W, int A, const std::string& where) {
  if (!cfg.memory.check_ram) return;
  const AlgorithmInfo algorithm = find_algorithm(cfg.algorithm.name);
  if (!algorithm.memory) return;
  constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
  const MemoryNeed need = algorithm.memory(cfg, W, A);
  const MemoryLimit limit = memory_limit();
  if (limit.bytes > 0 && need.bytes > 0.9 * limit.bytes)
    throw InputError(
        fmt::format("{}: memory: {} {:.1f} GiB when full ({}), more than 90% of the {:.1f} GiB this process may "
                    "use ({}); {} (or set memory.check_ram = false)",
                    where, need.what, need.bytes / kGiB, need.detail, limit.bytes / kGiB, limit.source, need.fix));
}

void apply_test_faults(RunOptions& o, const char* spec) {
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
      throw InputError(
          fmt::format("{}='{}': '{}' is not KEY=ITERATION with KEY nonfinite_target_iteration or "
                      "nonfinite_weights_iteration",
                      kTestFaultsVariable, text, item));
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
    throw InputError(
        fmt::format("--resume {}: the checkpoint of iteration {} was trained with other values of keys that change what the run "
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

/// A resumed run without checkpoints/latest restarts from iteration 1 only when it has no
/// checkpoint at all (killed before its first): with iter-* directories there, restarting would
/// drop their iterations' metrics and snapshots, so it is refused naming the newest.
void refuse_checkpoints_without_latest(const fs::path& checkpoints, const std::string& run_dir) {
  if (!fs::is_directory(checkpoints) || fs::exists(checkpoints / "latest")) return;
  std::string name;  // the newest iter-N directory
  unsigned long long newest = 0;
  int count = 0;
  for (const auto& e : fs::directory_iterator(checkpoints)) {
    const std::string n = e.path().filename().string();
    unsigned long long it = 0;
    const char* end = n.data() + n.size();
    if (n.size() <= 5 || n.rfind("iter-", 0) != 0 || !e.is_directory()) continue;
    if (const auto [ptr, ec] = std::from_chars(n.data() + 5, end, it); ec != std::errc{} || ptr != end) continue;
    ++count;
    if (name.empty() || it > newest) newest = it, name = n;
  }
  if (count == 0) return;
  const std::string latest = (checkpoints / "latest").string();
  const std::string found =
      count == 1 ? fmt::format("checkpoint directory {} is there", (checkpoints / name).string())
                 : fmt::format("{} checkpoint directories are there, the newest {}", count, (checkpoints / name).string());
  throw InputError(
      fmt::format("--resume {}: {} is missing, but {}; restarting from iteration 1 would drop their metrics and snapshots, so "
                  "nothing was changed. If {} is complete (cfr-eval {} loads it), write its name into latest (echo {} > '{}') "
                  "and resume again; to start over, train into a new --run-dir",
                  run_dir, latest, found, name, (checkpoints / name).string(), name, latest));
}

/// The learner (or a single process): prepares the run directory, restores a resumed run's
/// latest checkpoint and says what the resume is, then trains.
int learn(Trainer& trainer, Config& cfg, const DriverOptions& opts, const std::string& config_toml) {
  const fs::path run_dir(opts.run_dir);
  if (!opts.resume && fs::exists(run_dir / "metrics.jsonl"))
    throw InputError(
        fmt::format("run directory {} already holds a run (metrics.jsonl); choose another --run-dir "
                    "or continue it with --resume {}",
                    opts.run_dir, opts.run_dir));
  if (opts.resume) require_directory(opts.run_dir, "--resume");
  fs::create_directories(run_dir);
  if (!opts.resume) {
    write_file_atomic((run_dir / "config.toml").string(), config_toml);
    write_part_config(opts.run_dir, config_toml, "first start");
    return trainer.train(1, nullptr, "");
  }
  const fs::path checkpoints = run_dir / "checkpoints";
  refuse_checkpoints_without_latest(checkpoints, opts.run_dir);
  // Leftovers of a checkpoint write that a crash interrupted (.tmp-* directories, FILE.tmp-XXXXXX
  // files of write_file_atomic, *.tmp files of earlier versions).
  if (fs::is_directory(checkpoints))
    for (const auto& e : fs::directory_iterator(checkpoints)) {
      const std::string name = e.path().filename().string();
      if (name.find(".tmp-") != std::string::npos || (name.size() > 4 && name.ends_with(".tmp"))) fs::remove_all(e.path());
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
      from == 0 ? "the run had no checkpoint yet: restarting from iteration 1"
      : report.exact
          ? fmt::format(
                "resumed from the checkpoint of iteration {}: exact ({}no training key changed: the "
                "same run as an uninterrupted one)",
                from, trainer.resume_needs_memories() ? "memories saved, " : "")
          : fmt::format("resumed from the checkpoint of iteration {}: NOT exact: {}", from, join_names(report.reasons));
  // The metrics first: an invalid line in them is refused before anything else is written.
  trim_metrics((run_dir / "metrics.jsonl").string(), from);
  const int part = write_part_config(opts.run_dir, config_toml, verdict);
  write_file_atomic((run_dir / "config.toml").string(), config_toml);
  const nlohmann::json record = {{"resume",
                                  {{"part", part},
                                   {"from_iteration", from},
                                   {"exact", from > 0 && report.exact},
                                   {"not_exact_because", report.reasons},
                                   {"changed_keys", report.changes}}}};
  return trainer.train(from + 1, record, "cfr-run: " + verdict);
}

}  // namespace

int run_training(Config& cfg, const DriverOptions& opts) {
  register_builtin_trainers();
  validate(cfg);
  const AlgorithmInfo algorithm = find_algorithm(cfg.algorithm.name);
  if (opts.dist != nullptr && !algorithm.distributed) {
    std::vector<std::string> distributed;
    for (const auto& name : algorithm_names())
      if (find_algorithm(name).distributed) distributed.push_back(name);
    throw InputError(fmt::format("algorithm.name = '{}' runs in one process: a distributed run (mpirun) is for {} only",
                                 algorithm.name, join_names(distributed)));
  }
  if (cfg.distributed.learners > 1) {
    if (opts.dist == nullptr)
      throw InputError(
          fmt::format("distributed.learners = {} trains on {} ranks of an MPI job: start it with mpirun -np {} (or more) "
                      "cfr-run ...; one process is one learner (distributed.learners = 1)",
                      cfg.distributed.learners, cfg.distributed.learners, cfg.distributed.learners));
    if (!algorithm.data_parallel) {
      std::vector<std::string> parallel;
      for (const auto& name : algorithm_names())
        if (find_algorithm(name).data_parallel) parallel.push_back(name);
      throw InputError(
          fmt::format("distributed.learners = {}: algorithm.name = '{}' trains on rank 0 alone; data-parallel learners "
                      "are for {} only (distributed.learners = 1)",
                      cfg.distributed.learners, algorithm.name, join_names(parallel)));
    }
  }
  if (opts.dist != nullptr) opts.dist->set_learners(cfg.distributed.learners);
  if (algorithm.make_trainer == nullptr)
    throw std::logic_error("algorithm '" + algorithm.name + "' has no trainer registered in this program");
  RunOptions run = run_options(cfg);
  apply_test_faults(run, std::getenv(kTestFaultsVariable));
  const bool learner = opts.dist == nullptr || opts.dist->learner();
  if (learner) {
    // network.precision resolved once (a traversal rank resolves on its own GPU, in its
    // NetworkSet): the networks take the choice, the run's log says why (RunContext::start).
    if (run.network.precision != "fp32") {
      PrecisionChoice precision = resolve_precision(run.network.precision, run.network.device, run.network.device_index);
      run.network.precision = std::move(precision.name);
      run.precision_note = std::move(precision.why);
    }
    const auto [W, A] = game_widths(cfg);
    check_memories_fit(cfg, W, A, cfg.source);
  }
  const std::string config_toml = to_toml(cfg);
  // The networks exist (a bad device is refused) before the run directory is touched.
  const TrainerIo io{
      .run_dir = opts.run_dir, .config_toml = config_toml, .stop = opts.stop, .progress = opts.progress, .dist = opts.dist};
  const PolicyLoader load_policy = [](const std::string& path, int invariant_chunk, const GameSettings& reader) {
    auto p = std::make_shared<CheckpointPolicy>(load_checkpoint_policy(path, invariant_chunk));
    std::string widened = widen_policy_inputs(*p, reader.encoding, invariant_chunk);
    const auto [W, A] = game_widths(p->config);
    GameSettings settings = game_settings(p->config);
    return FixedPolicy{.owner = p,
                       .evaluator = &p->strategy(),
                       .game = p->config.run.game,
                       .settings = settings,
                       .input_width = W,
                       .num_actions = A,
                       .iteration = p->iteration,
                       .checkpoint_dir = p->checkpoint_dir,
                       .weights = p->weights(),
                       .hidden_size = p->config.network.hidden_size,
                       .num_layers = p->config.network.num_layers,
                       .activation = p->config.network.activation,
                       .widened = std::move(widened)};
  };
  auto trainer = algorithm.make_trainer(
      {.config = cfg, .algorithm = algorithm, .run = run, .io = io, .game = game_settings(cfg), .load_policy = load_policy});
  if (!learner) return trainer->serve_learner();
  return learn(*trainer, cfg, opts, config_toml);
}

}  // namespace cfr
