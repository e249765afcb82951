#include "apps/players/checkpoint_policy.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "apps/players/evaluation.h"
#include "apps/run/algorithm_registry.h"
#include "apps/run/checkpoint_format.h"
#include "apps/run/checkpoints.h"
#include "apps/run/options.h"
#include "apps/run/run_files.h"
#include "apps/run/snapshots.h"
#include "engine/core/errors.h"
#include "engine/core/files.h"
#include "engine/tabular/game_tree.h"
#include "engine/traversal/traversal.h"
#include "engine/traversal/traversal_games.h"
#include "nets/networks.h"

namespace cfr {

struct LoadedCheckpoint {
  std::unique_ptr<NetworkSet> nets;
  LostCitiesTraversalGame game;
  int playing = kStrategyNet;  // the set's network that plays (AlgorithmInfo::playing_network)
};

void forward_states(Evaluator& net, const LostCitiesTraversalGame& game, std::span<const lc::State* const> states,
                    std::vector<float>& in, std::vector<float>& out, std::vector<ActionMask>& legal) {
  const std::size_t n = states.size(), W = static_cast<std::size_t>(game.input_width()),
                    A = static_cast<std::size_t>(game.num_actions());
  in.resize(n * W);
  out.resize(n * A);
  legal.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    legal[i] = states[i]->legal_mask();
    game.encode(*states[i], states[i]->current_player(), in.data() + i * W);
  }
  const auto max_batch = static_cast<std::size_t>(std::max(1, net.info().max_batch));
  for (std::size_t s = 0; s < n; s += max_batch) {
    const std::size_t k = std::min(max_batch, n - s);
    net.evaluate(std::span<const float>(in).subspan(s * W, k * W), std::span<const ActionMask>(legal).subspan(s, k),
                 std::span<float>(out).subspan(s * A, k * A));
  }
}

namespace {

/// The network settings a loaded policy runs with: its run's shape, on the CPU.
NetworkConfig cpu_network_config(const Config& config, int invariant_chunk = 0) {
  return {.hidden_size = config.network.hidden_size,
          .num_layers = config.network.num_layers,
          .activation = config.network.activation,
          .device = "cpu",
          .device_index = 0,
          .invariant_chunk = invariant_chunk};
}

class StrategyBatchBot final : public lc::BatchBot {
 public:
  StrategyBatchBot(Evaluator& net, const LostCitiesTraversalGame& game, PlayMode play, std::shared_ptr<void> keep_alive,
                   std::string name)
      : net_(net), game_(game), play_(play), keep_(std::move(keep_alive)), name_(std::move(name)) {
    if (name_.empty()) name_ = play_ == PlayMode::kSampled ? "checkpoint-sampled" : "checkpoint";
  }
  std::string_view name() const noexcept override { return name_; }
  void choose_actions(std::span<const lc::State* const> states, std::span<Rng* const> rngs, std::span<const int>,
                      std::span<int> actions) override {
    const std::size_t n = states.size(), A = static_cast<std::size_t>(game_.num_actions());
    forward_states(net_, game_, states, in_, out_, legal_);
    for (std::size_t i = 0; i < n; ++i) {
      const float* o = out_.data() + i * A;
      if (play_ == PlayMode::kSampled) {  // the average strategy itself: softmax over the legal logits
        float probs[kMaxTraversalActions];
        masked_softmax(o, legal_[i], static_cast<int>(A), probs);
        actions[i] = sample_action(probs, legal_[i], *rngs[i]);
        continue;
      }
      actions[i] = greedy_action(o, legal_[i]);
    }
  }

 private:
  Evaluator& net_;
  const LostCitiesTraversalGame& game_;
  PlayMode play_;
  std::shared_ptr<void> keep_;
  std::string name_;
  std::vector<float> in_, out_;
  std::vector<ActionMask> legal_;
};

/// Single Deep CFR's player (make_snapshot_player).
class SnapshotBatchBot final : public lc::BatchBot {
 public:
  SnapshotBatchBot(std::unique_ptr<NetworkSet> nets, std::vector<int> iterations, std::vector<std::vector<float>> weights,
                   bool linear, const LostCitiesTraversalGame& game, RmFallback fallback, double rm_epsilon, std::string name)
      : nets_(std::move(nets)),
        iterations_(std::move(iterations)),
        weights_(std::move(weights)),
        game_(game),
        fallback_(fallback),
        rm_epsilon_(rm_epsilon),
        name_(std::move(name)) {
    double total = 0;
    for (const int t : iterations_) cumulative_.push_back(total += linear ? t : 1.0);
  }
  std::string_view name() const noexcept override { return name_; }
  void choose_actions(std::span<const lc::State* const> states, std::span<Rng* const> rngs, std::span<const int> games,
                      std::span<int> actions) override {
    const std::size_t n = states.size();
    order_.resize(n);
    for (std::size_t i = 0; i < n; ++i) order_[i] = {snapshot_of(games[i]), states[i]->current_player(), i};
    std::sort(order_.begin(), order_.end());
    for (std::size_t lo = 0; lo < n;) {  // one forward per (snapshot, seat)
      std::size_t hi = lo;
      while (hi < n && order_[hi].snapshot == order_[lo].snapshot && order_[hi].seat == order_[lo].seat) ++hi;
      decide(order_[lo].snapshot, order_[lo].seat, lo, hi, states, rngs, actions);
      lo = hi;
    }
  }

 private:
  struct Pending {
    int snapshot, seat;
    std::size_t index;
    auto operator<=>(const Pending&) const = default;
  };
  int snapshot_of(int game) const {
    const double u = Rng(derive_seed(kSnapshotPlayStream, static_cast<std::uint64_t>(game))).uniform() * cumulative_.back();
    const auto it = std::upper_bound(cumulative_.begin(), cumulative_.end(), u);
    return static_cast<int>(
        std::min<std::ptrdiff_t>(it - cumulative_.begin(), static_cast<std::ptrdiff_t>(cumulative_.size()) - 1));
  }
  void decide(int snapshot, int seat, std::size_t lo, std::size_t hi, std::span<const lc::State* const> states,
              std::span<Rng* const> rngs, std::span<int> actions) {
    if (snapshot != loaded_) {
      nets_->set_published_weights(weights_[static_cast<std::size_t>(snapshot)]);
      loaded_ = snapshot;
    }
    const std::size_t m = hi - lo, W = static_cast<std::size_t>(game_.input_width()),
                      A = static_cast<std::size_t>(game_.num_actions());
    in_.resize(m * W);
    out_.resize(m * A);
    legal_.resize(m);
    for (std::size_t j = 0; j < m; ++j) {
      const lc::State& s = *states[order_[lo + j].index];
      legal_[j] = s.legal_mask();
      game_.encode(s, seat, in_.data() + j * W);
    }
    nets_->evaluator(seat).evaluate(in_, legal_, out_);
    float sigma[kMaxTraversalActions];
    for (std::size_t j = 0; j < m; ++j) {
      const std::size_t i = order_[lo + j].index;
      regret_matching(out_.data() + j * A, legal_[j], static_cast<int>(A), fallback_, rm_epsilon_, sigma);
      actions[i] = sample_action(sigma, legal_[j], *rngs[i]);
    }
  }

  std::unique_ptr<NetworkSet> nets_;  // the two advantage networks, loaded with one snapshot at a time
  std::vector<int> iterations_;
  std::vector<std::vector<float>> weights_;
  std::vector<double> cumulative_;
  LostCitiesTraversalGame game_;
  RmFallback fallback_;
  double rm_epsilon_;
  std::string name_;
  int loaded_ = -1;
  std::vector<Pending> order_;
  std::vector<float> in_, out_;
  std::vector<ActionMask> legal_;
};

}  // namespace

std::unique_ptr<lc::BatchBot> make_snapshot_player(const std::string& run_dir, const lc::Rules& rules) {
  namespace fs = std::filesystem;
  require_directory(run_dir, "snapshots: run directory");
  const Config config = load_config((fs::path(run_dir) / "config.toml").string());
  if (config.run.game != "lost_cities")
    throw InputError(fmt::format("snapshots:{}: a {} run cannot play Lost Cities", run_dir, config.run.game));
  if (!(config.rules == rules))
    throw InputError(fmt::format("snapshots:{}: the run was trained with other Lost Cities rules", run_dir));
  const auto [W, A] = game_widths(config);
  const AlgorithmInfo algorithm = find_algorithm(config.algorithm.name);
  if (!algorithm.advantage_snapshots)
    throw InputError(
        fmt::format("snapshots:{}: snapshots are Single Deep CFR's (regret networks); a run of algorithm {} "
                    "plays as checkpoint:{}",
                    run_dir, algorithm.name, run_dir));
  const auto snapshots = list_snapshots(run_dir);
  if (snapshots.empty())
    throw InputError(fmt::format("snapshots:{}: no snapshots (train with checkpoint.keep_snapshots = true)", run_dir));
  const NetworkSpecs all = algorithm.networks(config, W, A);
  auto nets = std::make_unique<NetworkSet>(NetworkSpecs(all.begin(), all.begin() + 2), cpu_network_config(config), 0);
  std::vector<int> iterations;
  std::vector<std::vector<float>> weights;
  for (const auto& [it, path] : snapshots) {
    iterations.push_back(it);
    weights.push_back(read_snapshot(path, nets->total_parameters()));
  }
  LostCitiesTraversalGame game{.rules = config.rules, .encoding = config.encoding, .bot = nullptr, .league_bots = {}};
  return std::make_unique<SnapshotBatchBot>(std::move(nets), std::move(iterations), std::move(weights),
                                            config.weighting_mode == "lcfr", game,
                                            config.all_negative_fallback == "argmax" ? RmFallback::kArgmax : RmFallback::kUniform,
                                            config.traversal.regret_matching_epsilon, "snapshots:" + run_dir);
}

std::unique_ptr<lc::BatchBot> make_strategy_batch_bot(Evaluator& strategy, const LostCitiesTraversalGame& game, PlayMode play,
                                                      std::shared_ptr<void> keep_alive, std::string name) {
  return std::make_unique<StrategyBatchBot>(strategy, game, play, std::move(keep_alive), std::move(name));
}

std::unique_ptr<lc::BatchBot> CheckpointPolicy::batch_bot(PlayMode play, std::string name) const {
  if (config.run.game != "lost_cities") throw InputError(fmt::format("a {} checkpoint cannot play Lost Cities", config.run.game));
  return make_strategy_batch_bot(state->nets->evaluator(state->playing), state->game, play, state, std::move(name));
}

namespace {

/// Loads checkpoint directory `ck` (load_checkpoint_policy).
CheckpointPolicy load_checkpoint_dir(const std::string& ck, int invariant_chunk) {
  namespace fs = std::filesystem;
  // The config a checkpoint was trained with is inside it (verified with its other files).
  // Checkpoints without one (older formats) are refused by their meta.json's version below.
  fs::path config = fs::path(ck) / "config.toml";
  if (!fs::exists(config)) config = fs::path(ck).parent_path().parent_path() / "config.toml";
  if (!fs::exists(config))
    throw InputError(fmt::format("{}: not a checkpoint directory (no config.toml in it or in its run directory)", ck));
  (void)verify_checkpoint(ck);  // its files are the bytes written, checked once, before any is read
  CheckpointPolicy p;
  p.config = load_config(config.string());
  const auto [W, A] = game_widths(p.config);
  p.state = std::make_shared<LoadedCheckpoint>();
  const AlgorithmInfo algorithm = find_algorithm(p.config.algorithm.name);
  NetworkSpecs specs = algorithm.networks(p.config, W, A);
  p.state->playing = algorithm.playing_network;
  const std::string meta = (fs::path(ck) / "meta.json").string();
  const std::string meta_text = read_text_file(meta);
  // export_policy: fewer networks than the set, the one that plays (and the value network when
  // exported with --value-from), in the order meta.json lists them.
  if (const std::vector<std::string> listed = meta_network_names(meta_text); !listed.empty() && listed.size() < specs.size()) {
    NetworkSpecs kept;
    int playing = -1;
    for (const std::string& name : listed) {
      const auto it = std::find_if(specs.begin(), specs.end(), [&](const NetworkSpec& s) { return s.name == name; });
      if (it == specs.end())
        throw InputError(fmt::format("{}: lists a network '{}' that {} does not have", meta, name, p.config.algorithm.name));
      if (it - specs.begin() == p.state->playing) playing = static_cast<int>(kept.size());
      kept.push_back(*it);
    }
    if (playing < 0)
      throw InputError(fmt::format("{}: does not list {}'s network that plays ('{}')", meta, p.config.algorithm.name,
                                   specs[static_cast<std::size_t>(p.state->playing)].name));
    specs = std::move(kept);
    p.state->playing = playing;
  }
  p.state->nets = std::make_unique<NetworkSet>(std::move(specs), cpu_network_config(p.config, invariant_chunk), 0);
  // Verified above: compared with the config and the network set only (no second hashing).
  p.iteration = parse_checkpoint_meta(meta_text, meta, checkpoint_shape(p.config), p.state->nets->specs()).iteration;
  p.state->nets->load((fs::path(ck) / "nets.pt").string());
  p.state->game.rules = p.config.rules;
  p.state->game.encoding = p.config.encoding;
  p.checkpoint_dir = ck;
  return p;
}

/// The checkpoint directory `latest` of run directory `path` names. A run that rotates its
/// checkpoints can remove that directory between the reading of `latest` and the looking for it;
/// it rewrites `latest` first, so `latest` is read again when it changed meanwhile, and a failure
/// while it reads the same as before is `latest`'s own (reported as it is).
std::string settled_latest(const std::string& path) {
  const auto latest_text = [&] {
    std::ifstream in(std::filesystem::path(path) / "checkpoints" / "latest");
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  for (int attempt = 1;; ++attempt) {
    const std::string before = latest_text();
    try {
      return latest_checkpoint_dir(path);
    } catch (const InputError&) {
      if (latest_text() == before || attempt >= 100) throw;
    }
  }
}

/// The `count` newest checkpoint directories of run directory `run` up to and including `last`
/// (its latest), oldest first; InputError when `run` is not a run directory or holds fewer.
std::vector<std::string> last_checkpoints(const std::string& run, const std::string& last, int count) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(run) / "checkpoints";
  if (!fs::is_directory(dir))
    throw InputError(fmt::format("{}: --average {} needs a run directory (with checkpoints/), not a checkpoint", run, count));
  // A checkpoint directory's iteration, −1 for any other name (checkpoint_dir_name's round trip).
  const auto iteration_of = [](const std::string& name) {
    int it = -1;
    if (name.size() > 5 && std::from_chars(name.data() + 5, name.data() + name.size(), it).ec == std::errc() &&
        checkpoint_dir_name(it) == name)
      return it;
    return -1;
  };
  const int newest = iteration_of(fs::path(last).filename().string());
  std::vector<std::pair<int, std::string>> found;
  for (const auto& e : fs::directory_iterator(dir)) {
    const int it = iteration_of(e.path().filename().string());
    if (it >= 0 && it <= newest && e.is_directory()) found.emplace_back(it, e.path().string());
  }
  if (found.size() < static_cast<std::size_t>(count))
    throw InputError(fmt::format("{}: --average {} needs {} checkpoints up to {}, the run has {}", dir.string(), count, count,
                                 fs::path(last).filename().string(), found.size()));
  std::sort(found.begin(), found.end());
  std::vector<std::string> dirs;
  for (auto i = found.size() - static_cast<std::size_t>(count); i < found.size(); ++i) dirs.push_back(found[i].second);
  return dirs;
}
}  // namespace

CheckpointPolicy load_checkpoint_policy(const std::string& path, int invariant_chunk) {
  namespace fs = std::filesystem;
  if (!fs::exists(path)) throw InputError(fmt::format("{}: no such checkpoint or run directory", path));
  require_directory(path, "checkpoint or run directory");
  if (!fs::exists(fs::path(path) / "checkpoints")) return load_checkpoint_dir(path, invariant_chunk);
  // A run directory whose run may be writing: between reading `latest` and reading the checkpoint
  // it names, the run can write a newer one and remove that one (checkpoint rotation), so that its
  // files vanish or change under the reader. Then `latest` names another checkpoint: load that
  // one. A failure while `latest` still names the same checkpoint is the checkpoint's own fault
  // (a corrupted file) and is reported as it is.
  std::string ck = settled_latest(path);
  for (int attempt = 1;; ++attempt) {
    try {
      return load_checkpoint_dir(ck, invariant_chunk);
    } catch (const std::exception&) {
      std::string now;
      try {
        now = settled_latest(path);
      } catch (const std::exception&) {
        now = ck;  // `latest` unreadable now: report the first failure
      }
      if (now == ck || attempt >= 100) throw;  // the first failure
      ck = now;
    }
  }
}

namespace {

/// The value network of `value_from` for a model of policy `p` (export_policy's value_from): its
/// checkpoint, checked to sit beside p's network in one network set and to be read as p's would be.
CheckpointPolicy critic_for(const CheckpointPolicy& p, const std::string& value_from) {
  if (p.value_scale() == 0)
    throw InputError(fmt::format("{}: a {} policy; --value-from adds an MMD value network to an MMD policy only",
                                 p.checkpoint_dir, p.config.algorithm.name));
  CheckpointPolicy c = load_checkpoint_policy(value_from);
  const auto differs = [&](const std::string& what, const std::string& theirs, const std::string& ours) {
    return InputError(
        fmt::format("--value-from {}: its {} ({}) differs from {}'s ({}); the value network must read the states "
                    "as the exported policy does",
                    value_from, what, theirs, p.checkpoint_dir, ours));
  };
  if (c.value_network() < 0)
    throw InputError(
        fmt::format("--value-from {}: has no value network on the information state (an MMD checkpoint "
                    "trained with mmd.value_input = 'info' has one)",
                    value_from));
  if (c.config.run.game != p.config.run.game) throw differs("game (run.game)", c.config.run.game, p.config.run.game);
  // Rules and encoding: named with the keys of the section that differ, as config_changes words them.
  const auto section_differs = [&](const std::string& section) {
    Config theirs = c.config, ours = p.config;
    std::string keys;
    for (const ConfigChange& k : config_changes(theirs, ours))
      if (k.key.starts_with(section + "."))
        keys += fmt::format("{}{}: {} in it, {} in the policy", keys.empty() ? "" : ", ", k.key, k.before, k.after);
    return InputError(
        fmt::format("--value-from {}: its {} differs from {}'s ({}); the value network must read the "
                    "states as the exported policy does",
                    value_from, section, p.checkpoint_dir, keys));
  };
  if (c.config.rules != p.config.rules) throw section_differs("rules");
  if (c.config.encoding != p.config.encoding) throw section_differs("encoding");
  const CheckpointShape a = checkpoint_shape(c.config), b = checkpoint_shape(p.config);
  if (a.hidden_size != b.hidden_size || a.num_layers != b.num_layers || a.activation != b.activation)
    throw differs("network shape", fmt::format("{}x{} {}", a.num_layers, a.hidden_size, a.activation),
                  fmt::format("{}x{} {}", b.num_layers, b.hidden_size, b.activation));
  if (c.value_scale() != p.value_scale())
    throw differs("mmd.reward_scale", fmt::format("{}", c.value_scale()), fmt::format("{}", p.value_scale()));
  if (c.win_reward() != p.win_reward())
    throw differs("mmd.win_reward", fmt::format("{}", c.win_reward()), fmt::format("{}", p.win_reward()));
  return c;
}

}  // namespace

ExportedPolicy export_policy(const std::string& from, const std::string& out, int average, const std::string& value_from) {
  namespace fs = std::filesystem;
  // OUT's own files (config.toml, meta.json, nets.pt) are replaced, nothing else in it is touched:
  // refuse what would lose data (the source itself or a folder holding it, or a folder that is
  // not an earlier export, whose files of those names are someone else's) before anything is read
  // or written.
  fs::path dest = fs::absolute(fs::path(out)).lexically_normal();
  if (!dest.has_filename()) dest = dest.parent_path();  // a trailing '/'
  const fs::path source = fs::absolute(fs::path(from)).lexically_normal();
  const auto [end, _] = std::mismatch(dest.begin(), dest.end(), source.begin(), source.end());
  if (end == dest.end())
    throw InputError(
        fmt::format("{}: the model's folder would replace {} (it is or holds the checkpoint); choose another", out, from));
  if (fs::exists(dest) && !(fs::is_directory(dest) && (fs::is_empty(dest) || fs::exists(dest / "manifest.json"))))
    throw InputError(fmt::format("{}: exists and is not an earlier export (no manifest.json); choose another folder", out));
  const CheckpointPolicy p = load_checkpoint_policy(from);
  NetworkSet& all = *p.state->nets;
  const NetworkSpec spec = all.spec(p.state->playing);
  std::optional<CheckpointPolicy> critic;
  NetworkSpecs specs{spec};
  if (!value_from.empty()) {
    critic = critic_for(p, value_from);
    specs.push_back(critic->state->nets->spec(critic->value_network()));
  }
  NetworkSet one(specs, cpu_network_config(p.config), 0);
  std::vector<int> averaged;
  if (average <= 1) {
    one.set_weights(0, all.published_weights(p.state->playing));  // what the checkpoint plays (its average, if any)
  } else {
    const std::vector<std::string> dirs = last_checkpoints(from, p.checkpoint_dir, average);
    std::vector<double> sum(p.weights().size(), 0.0);
    for (const std::string& dir : dirs) {
      // The newest is the one already loaded: a run in training rotates its latest checkpoint
      // away (only every checkpoint.save_every-th stays) and may do so between two loads of it.
      std::optional<CheckpointPolicy> loaded;
      const CheckpointPolicy& q =
          fs::path(dir).filename() == fs::path(p.checkpoint_dir).filename() ? p : loaded.emplace(load_checkpoint_policy(dir));
      const NetworkSpec s = q.state->nets->spec(q.state->playing);
      const std::vector<float> w = q.weights();
      if (s.name != spec.name || s.input_width != spec.input_width || s.output_width != spec.output_width ||
          w.size() != sum.size())
        throw InputError(
            fmt::format("{}: its {} network ({} inputs, {} outputs, {} weights) is not the shape of {}'s ({}, {}, "
                        "{}): --average needs checkpoints of one network",
                        dir, s.name, s.input_width, s.output_width, w.size(), p.checkpoint_dir, spec.input_width,
                        spec.output_width, sum.size()));
      for (std::size_t i = 0; i < w.size(); ++i) sum[i] += w[i];
      averaged.push_back(q.iteration);
    }
    std::vector<float> mean(sum.size());
    for (std::size_t i = 0; i < sum.size(); ++i) mean[i] = static_cast<float>(sum[i] / static_cast<double>(dirs.size()));
    one.set_weights(0, mean);
  }
  ExportedPolicy e;
  e.iteration = p.iteration;
  e.algorithm = p.config.algorithm.name;
  e.network = spec.name;
  e.parameters = one.parameters(0);
  e.averaged_iterations = std::move(averaged);
  if (critic) {
    one.set_weights(1, critic->state->nets->published_weights(critic->value_network()));
    e.value_from = critic->checkpoint_dir;
    e.value_iteration = critic->iteration;
    e.value_fitted_to_policy = critic->weights() == one.published_weights(0);
  }
  Config config = p.config;
  // The model's config describes its networks: the loader rebuilds the value network's input
  // width from mmd.value_input, which is the critic's ('info'), whatever the policy's run used.
  if (critic)
    config.algorithm_options.at("mmd").values.at("value_input") =
        critic->config.algorithm_options.at("mmd").values.at("value_input");
  // Written whole into a new temporary folder of its own beside OUT (OUT.tmp-XXXXXX, made by
  // mkdtemp: nothing already there, e.g. a user's OUT.tmp, is touched), then each file renamed
  // into OUT (each replaced atomically; meta.json, which checks the others, last). A user's files
  // in OUT stay.
  fs::create_directories(dest.parent_path());
  std::string tmp_name = (dest.parent_path() / (dest.filename().string() + ".tmp-XXXXXX")).string();
  if (::mkdtemp(tmp_name.data()) == nullptr)
    throw InputError(fmt::format("{}: cannot create a temporary folder beside it: {}", out, std::strerror(errno)));
  const fs::path tmp = tmp_name;
  try {
    write_checkpoint_files(one, tmp.string(),
                           {.run_dir = "",
                            .iteration = p.iteration,
                            .config_toml = to_toml(config),
                            .shape = checkpoint_shape(p.config),
                            // A model does not resume training: its trainer RNG is a fixed placeholder.
                            .train_rng = Rng(1).state(),
                            .write_memories = nullptr,
                            .extra_files = {}});
    try {  // what was written loads as a model, before anything in OUT is replaced
      (void)load_checkpoint_dir(tmp.string(), 0);
    } catch (const InputError& err) {
      throw InputError(fmt::format("{}: the export would not load ({}); nothing was written", out, err.what()));
    }
  } catch (...) {
    fs::remove_all(tmp);  // the folder this call made, and only what it wrote there
    throw;
  }
  fs::create_directories(dest);
  for (const char* name : {"nets.pt", "config.toml", "meta.json"}) fs::rename(tmp / name, dest / name);
  fs::remove(tmp);
  return e;
}

std::string widen_policy_inputs(CheckpointPolicy& p, const lc::EncodingOptions& to, int invariant_chunk) {
  if (p.config.run.game != "lost_cities" || p.config.encoding == to) return {};
  const std::vector<int> columns = lc::encoding_column_map(p.config.rules, p.config.encoding, to);
  NetworkSpec spec = p.state->nets->spec(p.state->playing);
  if (columns.empty() || spec.input_width != lc::encoding_size(p.config.rules, p.config.encoding)) return {};
  const std::vector<float> weights = rewire_inputs(p.weights(), p.config.network.hidden_size, spec.input_width, columns);
  spec.input_width = static_cast<int>(columns.size());
  auto state = std::make_shared<LoadedCheckpoint>();
  state->nets = std::make_unique<NetworkSet>(NetworkSpecs{spec}, cpu_network_config(p.config, invariant_chunk), 0);
  state->nets->set_weights(0, weights);
  state->playing = 0;
  state->game.rules = p.config.rules;
  state->game.encoding = to;
  std::string added;
  const auto before = lc::encoding_blocks(p.config.rules, p.config.encoding), after = lc::encoding_blocks(p.config.rules, to);
  for (int k = 0; k < lc::kEncodingBlocks; ++k)
    if (after[k].on && !before[k].on) added += fmt::format("{}encoding.{}", added.empty() ? "" : ", ", after[k].name);
  p.config.encoding = to;
  p.state = std::move(state);
  return added;
}

Evaluator& CheckpointPolicy::strategy() const { return state->nets->evaluator(state->playing); }
std::vector<float> CheckpointPolicy::weights() const { return state->nets->published_weights(state->playing); }
int CheckpointPolicy::value_network() const {
  if (value_scale() == 0) return -1;
  const NetworkSet& nets = *state->nets;
  for (int k = 0; k < nets.size(); ++k)
    if (nets.spec(k).name == "value" && nets.spec(k).output_width == 1 &&
        nets.spec(k).input_width == nets.spec(state->playing).input_width)
      return k;
  return -1;
}
Evaluator* CheckpointPolicy::value() const {
  const int k = value_network();
  return k < 0 ? nullptr : &state->nets->evaluator(k);
}
namespace {
/// An mmd.* real of an MMD checkpoint's config; 0 for another algorithm's.
double mmd_real(const Config& config, const char* key) {
  const auto m = config.algorithm_options.find("mmd");
  return config.algorithm.name == "mmd" && m != config.algorithm_options.end() ? m->second.real(key) : 0.0;
}
}  // namespace
double CheckpointPolicy::value_scale() const { return mmd_real(config, "reward_scale"); }
double CheckpointPolicy::win_reward() const { return mmd_real(config, "win_reward"); }
const LostCitiesTraversalGame& CheckpointPolicy::game() const { return state->game; }

TabularPolicy CheckpointPolicy::tabular(const GameTree& tree) const {
  return strategy_policy(tree, state->nets->evaluator(state->playing));
}

}  // namespace cfr
