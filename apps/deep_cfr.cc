#include "apps/deep_cfr.h"

#include "apps/algorithms/deep_cfr/networks.h"
#include "apps/checkpoint_format.h"
#include "apps/checkpoint_policy.h"
#include "apps/distributed.h"

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <cmath>
#include <cstdio>
#include <exception>
#include <map>
#include <optional>
#include <thread>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <utility>
#include <filesystem>
#include <fstream>

#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "engine/best_response.h"
#include "engine/checksum.h"
#include "engine/files.h"
#include "engine/games.h"
#include "engine/match.h"
#include "engine/reservoir.h"
#include "engine/resources.h"
#include "engine/traversal.h"
#include "engine/traversal_games.h"
#include "nets/networks.h"
#include "sched/sample_pipe.h"
#include "sched/scheduler.h"

namespace cfr {

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

TraversalOptions traversal_options(const Config& c) {
  const auto& t = c.traversal;
  return TraversalOptions{
      .kind = t.algorithm == "external_sampling" ? TraversalKind::kExternalSampling : TraversalKind::kOutcomeSampling,
      .epsilon = t.outcome_sampling_epsilon,
      .prob_floor = t.probability_floor,
      .value_clip = t.outcome_sampling_value_clip,
      .unsampled = t.outcome_unsampled_regret == "zero" ? UnsampledRegret::kZero : UnsampledRegret::kNegativeNodeValue,
      .max_nodes = t.max_nodes_per_traversal,
      .cutoff = t.cutoff_value_mode == "score_diff" ? CutoffValue::kScoreDiff : CutoffValue::kZero,
      .opponent = t.opponent_policy == "average_strategy" ? OpponentPolicy::kAverageStrategy
                  : t.opponent_policy == "network"        ? OpponentPolicy::kNetwork
                                                          : OpponentPolicy::kBot,
      .fallback = c.all_negative_fallback == "argmax" ? RmFallback::kArgmax : RmFallback::kUniform,
      .rm_epsilon = t.regret_matching_epsilon};
}

/// One forward of `net` over every information set of `tree` (inputs in infoset order):
/// num_infosets × num_distinct_actions outputs.
std::vector<float> evaluate_infosets(const GameTree& tree, Evaluator& net) {
  const int W = tree.encoding_width(), A = tree.num_distinct_actions(), n = tree.num_infosets();
  std::vector<float> in(static_cast<std::size_t>(n * W)), out(static_cast<std::size_t>(n * A));
  std::vector<ActionMask> legal(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    std::copy_n(tree.infoset_encoding(i), W, in.data() + static_cast<std::size_t>(i * W));
    legal[static_cast<std::size_t>(i)] = tree.infoset(i).legal;
  }
  net.evaluate(in, legal, out);
  return out;
}

}  // namespace

TabularPolicy strategy_policy(const GameTree& tree, Evaluator& strategy) {
  const int A = tree.num_distinct_actions(), n = tree.num_infosets();
  const std::vector<float> out = evaluate_infosets(tree, strategy);
  TabularPolicy pol(tree);
  std::vector<float> probs(static_cast<std::size_t>(A));
  for (int i = 0; i < n; ++i) {
    masked_softmax(out.data() + static_cast<std::size_t>(i * A), tree.infoset(i).legal, A, probs.data());
    double sum = 0;
    for (int a = 0; a < A; ++a) sum += probs[static_cast<std::size_t>(a)];
    for (int a = 0; a < A; ++a) pol.row(i)[static_cast<std::size_t>(a)] = probs[static_cast<std::size_t>(a)] / sum;
  }
  return pol;
}

double advantage_fit_l1(const GameTree& tree, Evaluator& advantage, const ReservoirMemory& memory, int player,
                        bool linear, RmFallback fallback, double rm_epsilon) {
  const int A = tree.num_distinct_actions(), n = tree.num_infosets();
  std::vector<double> weights;
  const std::vector<double> sums = sample_sums(tree, memory, linear, &weights);
  const std::vector<float> out = evaluate_infosets(tree, advantage);
  std::vector<float> mean(static_cast<std::size_t>(A)), p_net(static_cast<std::size_t>(A)), p_mean(static_cast<std::size_t>(A));
  double total = 0;
  int counted = 0;
  for (int i = 0; i < n; ++i) {
    const double w = weights[static_cast<std::size_t>(i)];
    if (tree.infoset(i).player != player || w <= 0) continue;
    const ActionMask legal = tree.infoset(i).legal;
    for (int a = 0; a < A; ++a) mean[static_cast<std::size_t>(a)] = static_cast<float>(sums[static_cast<std::size_t>(i * A + a)] / w);
    regret_matching(out.data() + static_cast<std::size_t>(i * A), legal, A, fallback, rm_epsilon, p_net.data());
    regret_matching(mean.data(), legal, A, fallback, rm_epsilon, p_mean.data());
    for (int a = 0; a < A; ++a) total += std::abs(p_net[static_cast<std::size_t>(a)] - p_mean[static_cast<std::size_t>(a)]);
    ++counted;
  }
  return counted ? total / counted : 0.0;
}

namespace fs = std::filesystem;

namespace {

std::string iter_name(int it) { return fmt::format("iter-{:06d}", it); }

void write_text_atomic(const fs::path& path, const std::string& text) { write_file_atomic(path.string(), text); }

struct Memories {
  ReservoirMemory* adv0;
  ReservoirMemory* adv1;
  ReservoirMemory* strat;
};

void write_checkpoint(const fs::path& run_dir, const Config& cfg, const std::string& config_toml, int iteration,
                      const NetworkSet& nets, const Rng& train_rng, const Memories& mem, int previous_latest) {
  const fs::path dir = run_dir / "checkpoints";
  fs::create_directories(dir);
  const fs::path tmp = dir / (".tmp-" + iter_name(iteration));
  fs::remove_all(tmp);
  fs::create_directories(tmp);
  std::vector<std::string> names = {"nets.pt", "config.toml"};
  nets.save((tmp / "nets.pt").string());
  write_text_atomic(tmp / "config.toml", config_toml);
  if (cfg.checkpoint.include_memories) {
    std::ofstream out(tmp / "memories.bin", std::ios::binary | std::ios::trunc);
    mem.adv0->save(out);
    mem.adv1->save(out);
    mem.strat->save(out);
    out.close();
    if (!out) throw InputError(fmt::format("{}: cannot write memories", (tmp / "memories.bin").string()));
    names.push_back("memories.bin");
  }
  // The checksums are of the files as they are on disk (read back), so a loader proves it reads
  // the bytes that were written.
  std::map<std::string, FileChecksum> files;
  for (const auto& name : names) files[name] = file_checksum((tmp / name).string());
  write_text_atomic(tmp / "meta.json", checkpoint_meta_json(cfg, iteration, nets.specs(), train_rng.state(), files));
  const fs::path final_dir = dir / iter_name(iteration);
  fs::remove_all(final_dir);
  fs::rename(tmp, final_dir);
  write_text_atomic(dir / "latest", iter_name(iteration) + "\n");
  // The previous latest is kept only on save_every boundaries.
  if (previous_latest > 0 && previous_latest != iteration &&
      (cfg.checkpoint.save_every <= 0 || previous_latest % cfg.checkpoint.save_every != 0))
    fs::remove_all(dir / iter_name(previous_latest));
}

/// Where a resumed run starts: the latest checkpoint's iteration (0: none yet), the config it
/// was trained with and whether it saved the memories.
struct ResumePoint {
  int iteration = 0;
  std::optional<Config> trained_with;
  bool memories = false;
};

/// Loads the latest checkpoint of run_dir, its files verified against meta.json's checksums.
/// Leftovers of a checkpoint write that a crash interrupted (.tmp-* directories, *.tmp files)
/// are removed first.
ResumePoint read_checkpoint(const fs::path& run_dir, const Config& cfg, NetworkSet& nets, Rng& train_rng,
                            const Memories& mem) {
  const fs::path dir = run_dir / "checkpoints";
  if (fs::is_directory(dir))
    for (const auto& e : fs::directory_iterator(dir)) {
      const std::string name = e.path().filename().string();
      if (name.rfind(".tmp-", 0) == 0 || (name.size() > 4 && name.ends_with(".tmp"))) fs::remove_all(e.path());
    }
  if (!fs::exists(dir / "latest")) return {};  // killed before its first checkpoint: start over
  const fs::path ck = latest_checkpoint_dir(run_dir.string());
  const CheckpointMeta meta = read_checkpoint_meta(ck.string(), cfg, nets.specs());
  ResumePoint rp{.iteration = meta.iteration, .trained_with = load_config((ck / "config.toml").string()),
                 .memories = meta.memories};
  nets.load((ck / "nets.pt").string());
  train_rng.set_state(meta.train_rng);
  if (meta.memories) {
    const std::string mw = (ck / "memories.bin").string();
    std::ifstream in(mw, std::ios::binary);
    if (!in) throw InputError(fmt::format("{}: cannot open", mw));
    read_checkpoint_memories(in, mw, *mem.adv0, *mem.adv1, *mem.strat);
  }
  return rp;
}

/// What a resume continues with, compared with what its checkpoint was trained with: refuses
/// changed training keys unless allowed, and says whether the resumed run is the run that an
/// uninterrupted one would have been (the checkpoint saved the memories, no training key changed).
struct ResumeReport {
  bool exact = true;
  std::vector<std::string> reasons;  // why not exact
  nlohmann::json changes = nlohmann::json::array();
};
ResumeReport compare_resume(Config& cfg, ResumePoint& rp, bool allow_training_changes, const std::string& run_dir) {
  ResumeReport r;
  if (!rp.trained_with) return r;
  std::vector<std::string> training;
  for (const auto& c : config_changes(*rp.trained_with, cfg)) {
    r.changes.push_back({{"key", c.key}, {"before", c.before}, {"after", c.after}, {"training", c.training}});
    if (c.training) training.push_back(fmt::format("{} {} → {}", c.key, c.before, c.after));
  }
  if (!training.empty() && !allow_training_changes)
    throw InputError(fmt::format(
        "--resume {}: the checkpoint of iteration {} was trained with other values of keys that change what the run "
        "computes: {}; the resumed run would not be the same run. Resume without these changes, or pass "
        "--allow-training-changes to continue with them anyway",
        run_dir, rp.iteration, join_names(training)));
  if (!rp.memories) {
    r.exact = false;
    r.reasons.push_back("the checkpoint has no memories (checkpoint.include_memories = false): they restart empty");
  }
  if (!training.empty()) {
    r.exact = false;
    r.reasons.push_back("training keys changed (--allow-training-changes): " + join_names(training));
  }
  return r;
}

/// run_dir/parts/part-NNN.toml: each part of a run (its first start and every resume) keeps the
/// resolved config it ran with, headed by what it resumed from. Returns the part's number.
int write_part_config(const fs::path& run_dir, const std::string& config_toml, const std::string& header) {
  const fs::path parts = run_dir / "parts";
  fs::create_directories(parts);
  int n = 1;
  while (fs::exists(parts / fmt::format("part-{:03d}.toml", n))) ++n;
  std::string text;
  for (const auto& line : std::vector<std::string>{fmt::format("part {}", n), header}) text += "# " + line + "\n";
  write_text_atomic(parts / fmt::format("part-{:03d}.toml", n), text + config_toml);
  return n;
}

/// The networks, scheduler, sample-pipe bounds and traversal job a config asks for (shared by the
/// learner and the traversal ranks of a distributed run).
NetworkConfig network_config(const Config& cfg, int device_index) {
  return {.hidden_size = cfg.network.hidden_size, .num_layers = cfg.network.num_layers,
          .activation = cfg.network.activation, .device = cfg.run.device, .device_index = device_index,
          .invariant_chunk = cfg.network.invariant_chunk};
}
std::unique_ptr<Scheduler> configured_scheduler(const Config& cfg) {
  return make_scheduler(cfg.traversal.scheduler, SchedulerConfig{.window = cfg.traversal.interleave_width,
                                                                 .max_batch = cfg.traversal.interleave_max_batch,
                                                                 .threads = cfg.traversal.num_workers,
                                                                 .deadline_us = cfg.traversal.deadline_us});
}
SamplePipeOptions pipe_options(const Config& cfg) {
  return {.capacity_blocks = cfg.memory.sample_pipe_blocks, .block_samples = cfg.memory.sample_block_samples};
}
template <class G>
TraversalJob phase_job(int it, int player, TraversalShare share, std::uint64_t seed, const G& game, const TraversalOptions& topts) {
  return {.iteration = it, .traverser = player, .num_traversals = share.count, .first_index = share.first, .seed = seed,
          .input_width = game.input_width(), .output_width = game.num_actions(),
          .start = [&game, &topts](TraversalContext& ctx) { return traverse(ctx, game, topts); }};
}

/// One long-lived thread that runs one job at a time (the trainer thread, the threads of
/// parallel traversal shares). A thread per
/// iteration would make glibc and OpenBLAS set up per-thread state again each time (the soak
/// run's resident memory crept up with it).
class WorkerThread {
 public:
  WorkerThread() : thread_([this] { loop(); }) {}
  ~WorkerThread() {
    {
      std::lock_guard lock(m_);
      quit_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  WorkerThread(const WorkerThread&) = delete;
  WorkerThread& operator=(const WorkerThread&) = delete;
  void submit(std::function<void()> job) {
    {
      std::lock_guard lock(m_);
      job_ = std::move(job);
      busy_ = true;
    }
    cv_.notify_all();
  }
  /// Waits for the submitted job; rethrows what it threw.
  void wait() {
    std::unique_lock lock(m_);
    cv_.wait(lock, [&] { return !busy_; });
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
  }

 private:
  void loop() {
    std::unique_lock lock(m_);
    for (;;) {
      cv_.wait(lock, [&] { return quit_ || static_cast<bool>(job_); });
      if (quit_) return;
      auto job = std::move(job_);
      job_ = nullptr;
      lock.unlock();
      std::exception_ptr err;
      try {
        job();
      } catch (...) {
        err = std::current_exception();
      }
      lock.lock();
      error_ = err;
      busy_ = false;
      cv_.notify_all();
    }
  }
  std::mutex m_;
  std::condition_variable cv_;
  std::function<void()> job_;
  std::exception_ptr error_;
  bool busy_ = false, quit_ = false;
  std::thread thread_;
};

/// A finished share's samples, kept until the shares before it have reached the sink (a sink
/// takes traversals in index order). Its buffers keep their capacity from phase to phase.
struct BufferedShare final : SampleSink {
  TraversalContext carrier;
  void begin(int input_width, int output_width) {
    carrier.advantage.configure(input_width, output_width);
    carrier.strategy.configure(input_width, output_width);
  }
  void consume(const TraversalContext& ctx) override {
    carrier.advantage.append(ctx.advantage);
    carrier.strategy.append(ctx.strategy);
    carrier.index = ctx.index;
  }
};

/// `traversal.parallel_shares` = S: a traversal phase split into S contiguous shares of the
/// traversal indices, each run by its own scheduler on its own thread with its own replica of
/// the published networks. Share 0 streams into the sink; the others are buffered and follow it
/// in order, so the memories receive the samples in index order as with one share. Traversal j
/// draws from the same RNG stream whatever S (outputs equal bit for bit with
/// network.invariant_chunk; docs/deep-cfr.md "Batch invariance").
template <class G>
class PhaseShares {
 public:
  PhaseShares(int count, const Config& cfg, NetworkSet& nets, Scheduler& first,
              const G& game, const TraversalOptions& topts, std::uint64_t seed)
      : n_(cfg.traversal.traversals_per_player), game_(game), topts_(topts), seed_(seed) {
    const int s = std::max(1, std::min(count, n_));
    nets.set_replicas(s);
    schedulers_.push_back(&first);
    evals_.push_back(nets.evaluators(0));
    for (int k = 1; k < s; ++k) {
      owned_.push_back(configured_scheduler(cfg));
      schedulers_.push_back(owned_.back().get());
      evals_.push_back(nets.evaluators(k));
      threads_.push_back(std::make_unique<WorkerThread>());
      buffers_.push_back(std::make_unique<BufferedShare>());  // share k's is buffers_[k - 1]
    }
  }
  int count() const noexcept { return static_cast<int>(schedulers_.size()); }

  RunStats run(int it, int p, SampleSink& sink, const std::atomic<bool>* stop) {
    const int shares = count();
    std::vector<RunStats> st(static_cast<std::size_t>(shares));
    auto job = [&](int k) {
      const auto lo = static_cast<int>(static_cast<std::int64_t>(n_) * k / shares);
      const auto hi = static_cast<int>(static_cast<std::int64_t>(n_) * (k + 1) / shares);
      return phase_job(it, p, TraversalShare{lo, hi - lo}, seed_, game_, topts_);
    };
    for (int k = 1; k < shares; ++k) {
      const auto ku = static_cast<std::size_t>(k);
      buffers_[ku - 1]->begin(game_.input_width(), game_.num_actions());
      threads_[ku - 1]->submit([&, k, ku] { st[ku] = schedulers_[ku]->run(job(k), evals_[ku], *buffers_[ku - 1], stop); });
    }
    std::exception_ptr error;
    try {
      st[0] = schedulers_[0]->run(job(0), evals_[0], sink, stop);
    } catch (...) {
      error = std::current_exception();
    }
    for (int k = 1; k < shares; ++k) try {
        threads_[static_cast<std::size_t>(k - 1)]->wait();
      } catch (...) {
        if (!error) error = std::current_exception();
      }
    if (error) std::rethrow_exception(error);
    RunStats total = st[0];
    for (int k = 1; k < shares; ++k) {
      const auto ku = static_cast<std::size_t>(k);
      const TraversalContext& buffered = buffers_[ku - 1]->carrier;
      if (buffered.advantage.size() + buffered.strategy.size() > 0) sink.consume(buffered);
      total.nodes += st[ku].nodes;
      total.traversals += st[ku].traversals;
      total.batch.merge(st[ku].batch);
      total.stopped = total.stopped || st[ku].stopped;
    }
    return total;
  }

 private:
  int n_;
  const G& game_;
  const TraversalOptions& topts_;
  std::uint64_t seed_;
  std::vector<std::unique_ptr<Scheduler>> owned_;
  std::vector<Scheduler*> schedulers_;
  std::vector<std::vector<Evaluator*>> evals_;  // per share: its replica's evaluators
  std::vector<std::unique_ptr<WorkerThread>> threads_;
  std::vector<std::unique_ptr<BufferedShare>> buffers_;
};

/// Refuses, before anything is written, memories that cannot fit in the memory this process may
/// use (physical RAM, or a smaller cgroup limit as in a container) when full.
void check_memories_fit(const Config& cfg, int W, int A) {
  if (!cfg.memory.check_ram) return;
  // With merge_duplicates each memory has a view keeping a few bytes per slot (its rows, a copy
  // per distinct input, are what merging is for: few where it pays; see the run's warning).
  const double per = static_cast<double>(ReservoirMemory::bytes_per_sample(W, A) +
                                         (cfg.memory.merge_duplicates ? MergedSamples::kBytesPerSlot : 0));
  const double need = per * (2.0 * static_cast<double>(cfg.memory.advantage_capacity) +
                             static_cast<double>(cfg.memory.strategy_capacity));
  const MemoryLimit limit = memory_limit();
  constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
  if (limit.bytes > 0 && need > 0.9 * limit.bytes)
    throw InputError(fmt::format(
        "{}: memory: advantage_capacity = {} and strategy_capacity = {} need {:.1f} GiB when full (2 × {} + {} samples × {} "
        "bytes of {} → {} floats), more than 90% of the {:.1f} GiB this process may use ({}); lower the capacities (or "
        "set memory.check_ram = false)",
        cfg.source, cfg.memory.advantage_capacity, cfg.memory.strategy_capacity, need / kGiB, cfg.memory.advantage_capacity,
        cfg.memory.strategy_capacity, static_cast<std::int64_t>(per), W, A, limit.bytes / kGiB, limit.source));
}

/// Inserts a buffer's samples whose input and target are finite; returns how many were dropped.
/// With `poison_first` the first sample's target gets a NaN first (fault injection).
std::int64_t insert_finite(ReservoirMemory& mem, const SampleBuffer& b, bool poison_first) {
  std::int64_t dropped = 0;
  const int in_w = mem.input_width(), out_w = mem.target_width();
  std::array<float, 64> poisoned{};
  for (int i = 0; i < b.size(); ++i) {
    const float* input = b.input(i);
    const float* target = b.target(i);
    if (poison_first && i == 0 && out_w <= static_cast<int>(poisoned.size())) {
      std::copy_n(target, out_w, poisoned.data());
      poisoned[0] = std::nanf("");
      target = poisoned.data();
    }
    bool finite = true;
    for (int k = 0; k < in_w && finite; ++k) finite = std::isfinite(input[k]);
    for (int k = 0; k < out_w && finite; ++k) finite = std::isfinite(target[k]);
    if (!finite) {
      ++dropped;
      continue;
    }
    mem.insert(input, target, b.masks[static_cast<std::size_t>(i)], b.iterations[static_cast<std::size_t>(i)]);
  }
  return dropped;
}

/// metrics.jsonl, appended one whole line per write(2) (O_APPEND): a crash leaves complete lines
/// (a kill inside a multi-page write could still cut the last one; resume drops such a line).
class MetricsFile {
 public:
  explicit MetricsFile(const std::string& path) { open(path); }
  ~MetricsFile() { close(); }
  MetricsFile(const MetricsFile&) = delete;
  MetricsFile& operator=(const MetricsFile&) = delete;
  void open(const std::string& path) {
    close();
    path_ = path;
    fd_ = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) throw InputError(fmt::format("{}: cannot open for writing: {}", path, std::strerror(errno)));
  }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  void append(const std::string& line) {
    std::size_t done = 0;
    while (done < line.size()) {
      const ssize_t n = ::write(fd_, line.data() + done, line.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) throw InputError(fmt::format("{}: cannot write: {}", path_, std::strerror(errno)));
      done += static_cast<std::size_t>(n);
    }
  }

 private:
  std::string path_;
  int fd_ = -1;
};

/// Keeps the metrics lines of iterations ≤ last (and drops a torn last line), atomically.
void trim_metrics(const fs::path& path, int last) {
  std::ifstream in(path);
  std::string line, kept;
  while (std::getline(in, line)) {
    try {
      const auto j = nlohmann::json::parse(line);
      if (j.value("iteration", 0) <= last) kept += line + "\n";
    } catch (const nlohmann::json::exception&) {
      // a torn line from a crash: dropped
    }
  }
  write_text_atomic(path, kept);
}

template <class G>
int train(Config& cfg, const RunOptions& opts, const G& game) {
  configure_torch_threads(cfg.run.torch_threads);
  const int W = game.input_width(), A = game.num_actions();
  check_memories_fit(cfg, W, A);
  const bool alternating = cfg.traversal.update_order == "alternating";
  const auto seed = static_cast<std::uint64_t>(cfg.run.seed);
  NetworkSet nets(deep_cfr_networks(W, A), network_config(cfg, 0), seed);
  // The run directory is created once the networks exist, so that a bad device leaves nothing.
  if (!opts.resume && fs::exists(fs::path(opts.run_dir) / "metrics.jsonl"))
    throw InputError(fmt::format("run directory {} already holds a run (metrics.jsonl); choose another --run-dir "
                                 "or continue it with --resume {}", opts.run_dir, opts.run_dir));
  if (opts.resume) require_directory(opts.run_dir, "--resume");
  fs::create_directories(opts.run_dir);
  // A resumed run's config.toml is rewritten only once its checkpoint has loaded and been
  // compared (below): a refused resume must leave the run directory as it was.
  const std::string config_toml = to_toml(cfg);
  if (!opts.resume) {
    write_text_atomic(fs::path(opts.run_dir) / "config.toml", config_toml);
    write_part_config(opts.run_dir, config_toml, "first start");
  }
  MetricsFile metrics(opts.run_dir + "/metrics.jsonl");
  std::ofstream log(opts.run_dir + "/log.txt", std::ios::app);
  auto say = [&](const std::string& line) {
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
    log << line << "\n";
    log.flush();
  };


  ReservoirMemory adv0(cfg.memory.advantage_capacity, W, A, derive_seed(seed, kAdvantageMemoryStream, 0)),
      adv1(cfg.memory.advantage_capacity, W, A, derive_seed(seed, kAdvantageMemoryStream, 1)),
      strat(cfg.memory.strategy_capacity, W, A, derive_seed(seed, kStrategyMemoryStream));
  std::array<ReservoirMemory*, 2> adv{&adv0, &adv1};
  const TraversalOptions topts = traversal_options(cfg);
  auto scheduler = configured_scheduler(cfg);
  // A distributed learner does not traverse: its share count stays 1.
  PhaseShares<G> shares(opts.dist != nullptr ? 1 : cfg.traversal.parallel_shares, cfg, nets, *scheduler, game,
                        topts, seed);
  // Simultaneous updates on one traversal thread: advantage net 0 trains during player 1's
  // phase. With parallel shares both cores traverse, and it trains beside advantage net 1.
  const bool adv0_during_phase1 = !alternating && shares.count() == 1;
  TrainConfig adv_train{.updates = cfg.optimization.advantage_updates_per_iteration,
                        .batch_size = cfg.optimization.advantage_batch_size,
                        .learning_rate = cfg.optimization.learning_rate,
                        .weight_decay = cfg.optimization.weight_decay,
                        .grad_clip = cfg.optimization.grad_clip,
                        .linear_weighting = cfg.weighting_mode == "lcfr",
                        .ema_decay = cfg.optimization.ema_decay};
  TrainConfig strat_train = adv_train;
  strat_train.updates = cfg.optimization.strategy_updates_per_iteration;
  strat_train.batch_size = cfg.optimization.strategy_batch_size;
  // A stop request (SIGINT/SIGTERM) is seen between training steps too.
  adv_train.stop = strat_train.stop = opts.stop;
  Rng train_rng(derive_seed(seed, kTrainerStream));
  // memory.merge_duplicates: each training draws from its memory's samples merged per input
  // (MergedSamples, rebuilt from the memory's content first), whose weight column already holds
  // each row's total weight under the run's weighting.
  std::array<MergedSamples, 3> merged;
  bool warned_distinct = false;
  auto batches = [&](ReservoirMemory& mem, MergedSamples& view) -> BatchSource& {
    if (!cfg.memory.merge_duplicates) return mem;
    view.rebuild(mem, cfg.weighting_mode == "lcfr");
    return view;
  };
  auto merged_cfg = [&](TrainConfig c) {
    if (cfg.memory.merge_duplicates) c.linear_weighting = true;
    return c;
  };

  const Memories memories{&adv0, &adv1, &strat};
  int first = 1;
  nlohmann::json resume_record;  // in the first metrics line after a resume
  std::string resume_text;
  if (opts.resume) {
    ResumePoint rp = read_checkpoint(opts.run_dir, cfg, nets, train_rng, memories);
    first = rp.iteration + 1;
    const ResumeReport rr = compare_resume(cfg, rp, opts.allow_training_changes, opts.run_dir);
    resume_text = rp.iteration == 0 ? "the run had no checkpoint yet: restarting from iteration 1"
                  : rr.exact       ? fmt::format("resumed from the checkpoint of iteration {}: exact (memories saved, no "
                                                 "training key changed: the same run as an uninterrupted one)", rp.iteration)
                                   : fmt::format("resumed from the checkpoint of iteration {}: NOT exact: {}", rp.iteration,
                                                 join_names(rr.reasons));
    const int part = write_part_config(opts.run_dir, config_toml, resume_text);
    resume_record = {{"part", part}, {"from_iteration", rp.iteration}, {"exact", rp.iteration > 0 && rr.exact},
                     {"not_exact_because", rr.reasons}, {"changed_keys", rr.changes}};
    write_text_atomic(fs::path(opts.run_dir) / "config.toml", config_toml);
    metrics.close();  // trimming replaces the file: reopen afterwards
    trim_metrics(fs::path(opts.run_dir) / "metrics.jsonl", first - 1);
    metrics.open(opts.run_dir + "/metrics.jsonl");
  }
  int latest_checkpoint = first - 1;

  std::optional<GameTree> tree;
  if (cfg.run.game != "lost_cities") tree.emplace(build_game_tree(cfg.run.game));

  say(fmt::format("cfr-run: {} on {} — {} iterations × {} traversals per player; networks {}×{} ({} parameters each); scheduler {} (window {}); run dir {}",
                  cfg.run.experiment_name, cfg.run.game, cfg.run.max_iterations, cfg.traversal.traversals_per_player,
                  cfg.network.num_layers, cfg.network.hidden_size, nets.parameters(0), cfg.traversal.scheduler,
                  cfg.traversal.interleave_width, opts.run_dir));
  const auto t_start = Clock::now();
  if (opts.resume) say("cfr-run: " + resume_text);
  int done = first - 1;
  WorkerThread trainer;
  for (int it = first; it <= cfg.run.max_iterations; ++it) {
    if (opts.stop && opts.stop->load()) {
      say(fmt::format("cfr-run: stopped before iteration {}; the last checkpoint is iteration {}", it, latest_checkpoint));
      break;
    }
    if (cfg.run.max_minutes > 0 && since(t_start) > cfg.run.max_minutes * 60) {
      say(fmt::format("cfr-run: run.max_minutes = {} reached", cfg.run.max_minutes));
      break;
    }
    const auto t_it = Clock::now();
    nlohmann::json m = {{"iteration", it}};
    if (!resume_record.is_null()) m["resume"] = std::exchange(resume_record, nullptr);
    SampleDigest digest_adv, digest_strat;  // per stream: independent of how blocks are cut
    std::int64_t nodes = 0;
    double traversal_s = 0;
    BatchStats batch;
    bool stopped = false;
    // Advantage net 0 trains on the trainer thread while player 1's phase traverses: traversals
    // read only the published snapshots and player 1's phase never touches memory 0.
    std::array<TrainStats, 3> ts;
    // Each network's batches come from its own stream, drawn from the checkpointed trainer RNG
    // at the start of the iteration: results do not depend on which thread trains what.
    std::array<Rng, kNumNets> net_rng{Rng(train_rng()), Rng(train_rng()), Rng(train_rng())};
    if (cfg.optimization.learning_rate_decay_iterations > 0) {
      const double lr = cfg.optimization.learning_rate /
                        std::sqrt(1.0 + (it - 1) / static_cast<double>(cfg.optimization.learning_rate_decay_iterations));
      adv_train.learning_rate = strat_train.learning_rate = lr;
      m["learning_rate"] = lr;
    }
    double adv0_train_s = 0;
    auto train_adv = [&](int q) {
      const auto t = Clock::now();
      if (cfg.optimization.reinitialize_advantage) nets.reinitialize(advantage_net(q), it);
      ts[static_cast<std::size_t>(q)] = nets.train(advantage_net(q), batches(*adv[static_cast<std::size_t>(q)], merged[static_cast<std::size_t>(q)]),
                                                             it, merged_cfg(adv_train), net_rng[static_cast<std::size_t>(q)]);
      return since(t);
    };
    bool trainer_busy = false;
    struct WaitForTrainer {  // on an exception, the trainer's job must end before its captures do
      WorkerThread& t;
      bool& busy;
      ~WaitForTrainer() {
        if (busy) try {
            t.wait();
          } catch (...) {
          }
      }
    } wait_for_trainer{trainer, trainer_busy};
    std::array<std::int64_t, 3> dropped{};  // samples with non-finite values, per memory
    bool poisoned = false;
    if (it == cfg.faults.nonfinite_weights_iteration) nets.inject_nonfinite_weights(advantage_net(0));
    if (opts.dist != nullptr) {  // the iteration, then the published weights, to every traversal rank
      opts.dist->broadcast(std::int64_t{1});
      opts.dist->broadcast(std::int64_t{it});
      std::vector<float> weights = nets.published_weights();
      opts.dist->broadcast(weights);
      m["ranks"] = opts.dist->size();
    }
    for (int p = 0; p < 2; ++p) {
      if (p == 1 && alternating) {  // player 1 plays against player 0's new strategy
        adv0_train_s = train_adv(0);
        nets.publish(advantage_net(0));
        if (opts.dist != nullptr) {
          std::vector<float> weights = nets.published_weights();
          opts.dist->broadcast(weights);
        }
      } else if (p == 1 && adv0_during_phase1) {  // advantage net 0 trains while player 1's phase runs
        trainer.submit([&] { adv0_train_s = train_adv(0); });
        trainer_busy = true;
      }
      const auto t_phase = Clock::now();
      auto last_print = Clock::now();
      auto consume = [&](const SampleBlock& b) {
        digest_adv.add(b.advantage);
        digest_strat.add(b.strategy);
        const bool poison = it == cfg.faults.nonfinite_target_iteration && p == 0 && !poisoned && b.advantage.size() > 0;
        poisoned = poisoned || poison;
        dropped[static_cast<std::size_t>(p)] += insert_finite(*adv[static_cast<std::size_t>(p)], b.advantage, poison);
        dropped[2] += insert_finite(strat, b.strategy, false);
        if (opts.progress && since(last_print) > 0.25) {  // a live line on a terminal (consumer thread)
          last_print = Clock::now();
          const int n = b.last_traversal + 1, total = cfg.traversal.traversals_per_player;
          const double rate = n / std::max(1e-9, since(t_phase));
          std::fprintf(stderr, "\r  iteration %d/%d  player %d  [%-30s] %d/%d traversals  %.0f/s  phase ETA %.0fs   ", it,
                       cfg.run.max_iterations, p, std::string(static_cast<std::size_t>(30 * n / total), '#').c_str(), n,
                       total, rate, (total - n) / std::max(rate, 1e-9));
        }
      };
      RunStats st;
      if (opts.dist != nullptr) {  // the traversal ranks traverse; blocks arrive in rank order
        st = opts.dist->receive_phase(W, A, consume, cfg.distributed.timeout_seconds,
                                      fmt::format("iteration {}, player {}", it, p));
      } else {
        SamplePipe pipe(W, A, pipe_options(cfg), consume);
        st = shares.run(it, p, pipe, opts.stop);
        pipe.flush();
      }
      if (opts.progress) std::fprintf(stderr, "\r%100s\r", "");
      const double s = since(t_phase);
      traversal_s += s;
      nodes += st.nodes;
      batch.merge(st.batch);
      m[fmt::format("traversal_seconds_p{}", p)] = s;
      if (st.stopped) {
        stopped = true;
        break;
      }
    }
    const auto t_train = Clock::now();
    if (trainer_busy) {
      trainer_busy = false;
      trainer.wait();
    }
    // A stop request abandons the iteration wherever it is seen: the latest checkpoint stays the
    // last completed iteration.
    auto interrupted = [&](const char* step) {
      say(fmt::format("cfr-run: interrupted during iteration {}'s {}; the last checkpoint is iteration {}", it, step,
                      latest_checkpoint));
    };
    if (stopped) {
      interrupted("traversals");
      break;
    }
    const double adv0_wait_s = since(t_train);  // what remained of adv 0's training after the phase
    // Advantage net 1 (here) and the strategy net (trainer thread) train side by side; with
    // parallel shares and simultaneous updates advantage net 0 trains first on the trainer thread.
    double strat_s = 0;
    trainer.submit([&] {
      if (!alternating && !adv0_during_phase1) adv0_train_s = train_adv(0);
      const auto t_strat = Clock::now();
      ts[2] = nets.train(kStrategyNet, batches(strat, merged[2]), it, merged_cfg(strat_train), net_rng[2]);
      strat_s = since(t_strat);
    });
    trainer_busy = true;
    const double adv1_s = train_adv(1);
    trainer_busy = false;
    trainer.wait();
    if (ts[0].stopped || ts[1].stopped || ts[2].stopped) {
      interrupted("training");
      break;
    }
    nets.publish();
    const double train_s = since(t_train);
    m["train_seconds_advantage"] = {adv0_train_s, adv1_s};
    m["train_seconds_strategy"] = strat_s;
    if (cfg.memory.merge_duplicates) {  // rows at each view's last rebuild, against its memory's samples
      const std::array<std::int64_t, 3> sizes{adv0.size(), adv1.size(), strat.size()};
      m["merged_rows"] = {merged[0].rows(), merged[1].rows(), merged[2].rows()};
      for (std::size_t q = 0; q < 3 && !warned_distinct; ++q)
        if (sizes[q] >= 10000 && 2 * merged[q].rows() > sizes[q]) {
          warned_distinct = true;
          say(fmt::format("cfr-run: warning: memory.merge_duplicates: {} of the {} samples of memory {} have distinct inputs: "
                          "merging gains little here and keeps a copy of each input (it pays where inputs repeat, as in "
                          "Kuhn and Leduc)", merged[q].rows(), sizes[q], q));
        }
    }
    {  // the training's own compute vs. the rest (item 9: within 15% of forward+backward)
      double sample = 0, fb = 0, step = 0, total = 0;
      for (const auto& t : ts) {
        sample += t.sample_seconds;
        fb += t.forward_backward_seconds;
        step += t.step_seconds;
        total += t.seconds;
      }
      m["train_breakdown"] = {{"sample_seconds", sample}, {"forward_backward_seconds", fb}, {"step_seconds", step},
                              {"total_seconds", total}};
    }
    m["train_seconds_adv0_after_phase"] = adv0_wait_s;
    m["traversal_seconds"] = traversal_s;
    m["train_seconds"] = train_s;
    m["nodes"] = nodes;
    m["nodes_per_second"] = traversal_s > 0 ? nodes / traversal_s : 0.0;
    m["batch_mean"] = batch.mean_batch();
    m["forwards"] = batch.forwards;
    SampleDigest digest = digest_adv;
    digest.add(digest_strat.value());
    m["sample_digest"] = fmt::format("{:016x}", digest.value());
    m["loss_advantage"] = {ts[0].mean_loss, ts[1].mean_loss};
    m["loss_strategy"] = ts[2].mean_loss;
    m["grad_norm"] = {ts[0].mean_grad_norm, ts[1].mean_grad_norm, ts[2].mean_grad_norm};
    m["clipped_steps"] = {ts[0].clipped_steps, ts[1].clipped_steps, ts[2].clipped_steps};
    m["skipped_nonfinite_steps"] = ts[0].skipped_nonfinite + ts[1].skipped_nonfinite + ts[2].skipped_nonfinite;
    // Non-finite values (deep-cfr.md "Numeric faults"): reported per network with counts; the
    // policy decides whether the run goes on. Non-finite weights always stop it.
    std::string fault_report;
    bool weights_bad = false;
    {
      nlohmann::json nf = nlohmann::json::object();
      static constexpr const char* kNames[3] = {"advantage net 0", "advantage net 1", "strategy net"};
      for (int n = 0; n < kNumNets; ++n) {
        const auto k = static_cast<std::size_t>(n);
        const std::int64_t outs = nets.take_nonfinite_outputs(n), steps = ts[k].skipped_nonfinite, samples = dropped[k];
        const bool weights_ok = nets.weights_finite(n);
        weights_bad = weights_bad || !weights_ok;
        nf[fmt::format("net{}", n)] = {{"outputs", outs}, {"samples_dropped", samples}, {"steps_skipped", steps},
                                       {"weights_finite", weights_ok}};
        if (outs || steps || samples || !weights_ok)
          fault_report += fmt::format("{}{}: {} non-finite output value(s) replaced by 0, {} sample(s) with non-finite "
                                      "targets dropped, {} training step(s) with a non-finite loss skipped{}",
                                      fault_report.empty() ? "" : "; ", kNames[n], outs, samples, steps,
                                      weights_ok ? "" : ", weights are not finite");
      }
      m["nonfinite"] = nf;
    }
    m["memory_size"] = {adv0.size(), adv1.size(), strat.size()};
    m["memory_bytes"] = adv0.bytes() + adv1.bytes() + strat.bytes();
    std::string eval_text;
    const bool eval_now = (cfg.evaluation.eval_every > 0 && it % cfg.evaluation.eval_every == 0) || it == cfg.run.max_iterations;
    if (eval_now) {
      const auto t_eval = Clock::now();
      if (tree) {
        const TabularPolicy pol = strategy_policy(*tree, nets.evaluator(kStrategyNet));
        const auto r = exploitability(pol);
        write_policy_file(opts.run_dir + "/policy.json", pol);
        m["nash_conv"] = r.nash_conv;
        m["exploitability"] = r.exploitability;
        // What a perfect fit of the strategy net would score: the t-weighted average of the
        // strategy memory's samples (the gap between the two is the net's fitting error).
        const double mem_x = exploitability(sample_average_policy(*tree, strat, cfg.weighting_mode == "lcfr")).exploitability;
        m["exploitability_memory_average"] = mem_x;
        const auto to = traversal_options(cfg);
        m["advantage_fit_l1"] = {
            advantage_fit_l1(*tree, nets.evaluator(advantage_net(0)), adv0, 0, cfg.weighting_mode == "lcfr", to.fallback, to.rm_epsilon),
            advantage_fit_l1(*tree, nets.evaluator(advantage_net(1)), adv1, 1, cfg.weighting_mode == "lcfr", to.fallback, to.rm_epsilon)};
        eval_text = fmt::format("  exploitability {:.4f} ({:.0f} mA/g; memory average {:.4f})", r.exploitability,
                                1e3 * r.exploitability, mem_x);
      } else if constexpr (std::is_same_v<G, LostCitiesTraversalGame>) {
        // Batched: one forward per round of the games' pending decisions.
        auto me = make_strategy_batch_bot(nets.evaluator(kStrategyNet), game);
        nlohmann::json ev = nlohmann::json::object();
        for (const auto& name : cfg.evaluation.opponents) {
          auto bot = lc::make_bot(name, cfg.rules);
          const auto r = lc::run_match_batched(*me, *bot, {.games = cfg.evaluation.games, .seed = derive_seed(seed, kEvaluationStream, static_cast<std::uint64_t>(it)),
                                                  .max_steps = cfg.evaluation.max_steps, .rules = cfg.rules, .stop = opts.stop});
          if (r.stopped) {
            stopped = true;
            break;
          }
          ev[name] = nlohmann::json::parse(lc::report_json(r));
          eval_text += fmt::format("  vs {} {:.2f} ({:+.1f})", name, r.win_rate(), r.avg_diff());
        }
        m["evaluation"] = ev;
      }
      m["eval_seconds"] = since(t_eval);
    }
    if (stopped) {
      interrupted("evaluation");
      break;
    }
    m["iteration_seconds"] = since(t_it);
    m["rss_bytes"] = resident_bytes();
    metrics.append(m.dump() + "\n");
    if (!fault_report.empty()) {
      say(fmt::format("cfr-run: iteration {}: {}", it, fault_report));
      if (weights_bad || cfg.optimization.nonfinite_policy == "stop")
        throw NumericError(fmt::format(
            "iteration {}: {}; {}; the last checkpoint is iteration {} (resume with --resume {})", it, fault_report,
            weights_bad ? "non-finite weights cannot be skipped" : "optimization.nonfinite_policy = 'stop'",
            latest_checkpoint, opts.run_dir));
    }
    write_checkpoint(opts.run_dir, cfg, config_toml, it, nets, train_rng, memories, latest_checkpoint);
    latest_checkpoint = it;
    done = it;
    const double elapsed = since(t_start);
    const int left = cfg.run.max_iterations - it, ran = it - first + 1;
    say(fmt::format("iter {:>4}/{}  traversal {:.1f}s ({:.0f} nodes/s, batch {:.1f})  train {:.1f}s  loss adv {:.3g}/{:.3g} strat {:.3g}  digest {:016x}{}  ETA {:.0f}s",
                    it, cfg.run.max_iterations, traversal_s, traversal_s > 0 ? nodes / traversal_s : 0.0, batch.mean_batch(),
                    train_s, ts[0].mean_loss, ts[1].mean_loss, ts[2].mean_loss, digest.value(), eval_text,
                    cfg.run.max_minutes > 0 ? std::min(elapsed / ran * left, std::max(0.0, cfg.run.max_minutes * 60 - elapsed))
                                            : elapsed / ran * left));
  }
  if (opts.dist != nullptr) opts.dist->broadcast(std::int64_t{0});  // the traversal ranks stop
  return done;
}

/// A traversal rank of a distributed run: per iteration, receive the weights, traverse this
/// rank's share of each player's traversals and stream the samples to the learner.
template <class G>
int traverse_for_learner(const Config& cfg, Distributed& dist, const G& game) {
  configure_torch_threads(cfg.run.torch_threads);
  const int W = game.input_width(), A = game.num_actions();
  const auto seed = static_cast<std::uint64_t>(cfg.run.seed);
  // With run.device = "cuda", each rank of a host takes its own GPU: its local rank modulo the
  // host's GPUs (the learner, local rank 0 on its host, takes GPU 0).
  int local_rank = 0;
  for (const char* var : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"})
    if (const char* v = std::getenv(var)) {
      local_rank = std::atoi(v);
      break;
    }
  NetworkSet nets(deep_cfr_networks(W, A), network_config(cfg, local_rank), seed);
  const std::vector<Evaluator*> evals = nets.evaluators();
  const TraversalOptions topts = traversal_options(cfg);
  auto scheduler = configured_scheduler(cfg);
  const bool alternating = cfg.traversal.update_order == "alternating";
  int iterations = 0;
  std::vector<float> weights;
  while (dist.broadcast(std::int64_t{0}) != 0) {
    const int it = static_cast<int>(dist.broadcast(std::int64_t{0}));
    dist.broadcast(weights);
    nets.set_published_weights(weights);
    for (int p = 0; p < 2; ++p) {
      if (p == 1 && alternating) {  // advantage net 0 as the learner trained it after phase 0
        dist.broadcast(weights);
        nets.set_published_weights(weights);
      }
      const TraversalShare share = traversal_share(cfg.traversal.traversals_per_player, dist.rank(), dist.size());
      SamplePipe pipe(W, A, pipe_options(cfg), [&](const SampleBlock& b) { dist.send_block(b, share.first); });
      const TraversalJob job = phase_job(it, p, share, seed, game, topts);
      const RunStats st = scheduler->run(job, evals, pipe, nullptr);
      pipe.flush();
      dist.send_phase_end(st);
    }
    ++iterations;
  }
  return iterations;
}

/// Dispatches a process to its role: the learner (or a single process) trains, the other ranks
/// of a distributed run traverse.
template <class G>
int run_role(Config& cfg, const RunOptions& opts, const G& game) {
  if (opts.dist != nullptr && !opts.dist->learner()) return traverse_for_learner(cfg, *opts.dist, game);
  return train(cfg, opts, game);
}

}  // namespace

int load_checkpoint_networks(const std::string& ck, const Config& cfg, NetworkSet& nets) {
  const CheckpointMeta meta = read_checkpoint_meta(ck, cfg, nets.specs());
  nets.load((fs::path(ck) / "nets.pt").string());
  return meta.iteration;
}

std::pair<int, int> game_widths(const Config& cfg) {
  if (cfg.run.game == "lost_cities") return {lc::encoding_size(cfg.rules, cfg.encoding), cfg.rules.action_size()};
  return visit_game(cfg.run.game, []<class S>(std::type_identity<S>) -> std::pair<int, int> {
    if constexpr (EnumerableGame<S>) {
      const S s = S::initial();
      return {s.info_state_size(), s.num_distinct_actions()};
    } else {
      return {0, 0};
    }
  });
}

int run_deep_cfr(Config& cfg, const RunOptions& opts) {
  validate(cfg);
  if (cfg.run.game == "lost_cities") {
    LostCitiesTraversalGame g;
    g.rules = cfg.rules;
    g.encoding = cfg.encoding;
    if (cfg.traversal.opponent_policy == "bot") g.bot = lc::make_bot(cfg.traversal.opponent_bot, cfg.rules);
    return run_role(cfg, opts, g);
  }
  if (cfg.run.game == "kuhn") return run_role(cfg, opts, SmallTraversalGame<kuhn::State>{});
  return run_role(cfg, opts, SmallTraversalGame<leduc::State>{});
}

}  // namespace cfr
