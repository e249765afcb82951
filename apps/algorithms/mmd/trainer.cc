#include "apps/algorithms/mmd/trainer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <optional>
#include <span>
#include <type_traits>

#include <fmt/format.h>

#include "apps/algorithms/context.h"
#include "apps/algorithms/mmd/networks.h"
#include "apps/algorithms/overlap.h"
#include "apps/algorithms/run_steps.h"
#include "apps/players/evaluation.h"
#include "apps/run/checkpoint_format.h"
#include "apps/run/distributed.h"
#include "apps/run/run_files.h"
#include "apps/run/snapshots.h"
#include "apps/run/streams.h"
#include "engine/core/checksum.h"
#include "engine/core/errors.h"
#include "engine/core/resources.h"
#include "engine/games/games.h"
#include "engine/memory/reservoir.h"
#include "engine/tabular/best_response.h"
#include "engine/traversal/mmd.h"
#include "sched/sample_pipe.h"
#include "sched/worker_thread.h"

namespace cfr {

namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

/// The digest of a loaded league policy: what it plays (its game, shape, iteration and weights),
/// not where it was read from, so that ranks can compare what they loaded.
std::string league_policy_digest(const FixedPolicy& p) {
  std::string bytes = fmt::format("{} {} {} {} {} {} {} {}|", p.game, p.input_width, p.num_actions, p.iteration, p.num_layers,
                                  p.hidden_size, p.activation, p.widened);
  bytes.append(reinterpret_cast<const char*>(p.weights.data()), p.weights.size() * sizeof(float));
  return checksum_of(bytes);
}

/// The search teacher's networks (mmd.teacher = "search"): the policy and value networks the
/// rollouts play, through the set's replica 1 (own weights and buffers, published with replica
/// 0), one search at a time (rollouts may run on several threads).
class TeacherNets final : public SearchNets {
 public:
  explicit TeacherNets(NetworkSet& nets) : nets_(nets) { nets_.set_replicas(std::max(2, nets_.replicas())); }
  void forward(int net, std::span<const float> inputs, std::span<const ActionMask> legal, std::span<float> outputs) override {
    const std::lock_guard lock(mutex_);
    Evaluator& e = nets_.evaluator(net == 0 ? kPolicyNet : kMmdValueNet, 1);
    const EvaluatorInfo info = e.info();
    const std::size_t W = static_cast<std::size_t>(info.input_width), O = static_cast<std::size_t>(info.output_width);
    const std::size_t max = static_cast<std::size_t>(std::max(1, info.max_batch));
    for (std::size_t at = 0; at < legal.size(); at += max) {
      const std::size_t n = std::min(max, legal.size() - at);
      e.evaluate(inputs.subspan(at * W, n * W), legal.subspan(at, n), outputs.subspan(at * O, n * O));
    }
  }

 private:
  NetworkSet& nets_;
  std::mutex mutex_;
};

template <TraversalAdapter G>
class MmdTrainer final : public Trainer {
 public:
  MmdTrainer(const RunOptions& o, const MmdOptions& m, const TrainerIo& io, G game, const GameSettings& settings,
             const PolicyLoader& load_policy)
      : o_(o),
        m_(m),
        io_(io),
        game_(std::move(game)),
        W_(game_.input_width()),
        A_(game_.num_actions()),
        SW_(mmd_sample_width(W_, m.rollout.value_input, world_width_of(game_))),
        nets_(mmd_networks(W_, A_, SW_), network_for_this_rank(o.network, io.dist), o.seed),  // a rank's own GPU
        scheduler_(make_scheduler(o.scheduler, o.scheduler_options)),
        train_rng_(derive_seed(o.seed, kTrainerStream)) {
    configure_torch_threads(o.torch_threads);
    if (m_.search.share > 0) {  // mmd.teacher = "search" or "lookahead" (validated)
      teacher_.options = m_.search;
      if (!m_.search.lookahead) {  // the lookahead's queries are the rollouts' own
        teacher_nets_.emplace(nets_);
        teacher_.nets = &*teacher_nets_;
      }
    }
    const TrainConfig base = o.training;
    policy_train_ = base;
    policy_train_.batch_size = m_.batch_size;
    policy_train_.linear_weighting = false;
    policy_train_.target_scale = 1.0;
    policy_train_.policy_gradient = m_.terms;
    value_train_ = policy_train_;
    policy_train_.stop = value_train_.stop = io.stop;
    load_league(settings, load_policy);  // every rank: the league's networks play in the rollouts
    if (m_.overlap && io_.dist != nullptr)
      throw InputError(
          "mmd.overlap = true runs in one process: under mpirun the ranks play the rollouts while the learner waits for "
          "them; set mmd.overlap = false or run one process");
    if (!learner()) return;  // a rollout rank: the learner sends the weights and the draw
    mem_[0].emplace(m_.capacity, W_, SW_, A_, o.seed);
    if (m_.overlap) mem_[1].emplace(m_.capacity, W_, SW_, A_, o.seed);
    if constexpr (EnumerableGame<typename G::State>) tree_.emplace(build_game_tree(o.shape.game));
    if (!m_.initial_policy.empty()) {
      const std::string path = m_.initial_policy.substr(std::string_view("checkpoint:").size());
      if (!load_policy) throw InputError("mmd.initial_policy: this program cannot load checkpoints");
      FixedPolicy p = load_policy(path, 0, settings);
      if (!p.widened.empty()) initial_note_ = fmt::format(" (its first layer widened with zero weights for {})", p.widened);
      if (!(p.settings.rules == settings.rules) || !(p.settings.encoding == settings.encoding))
        throw InputError(fmt::format(
            "mmd.initial_policy: {} ({}) was trained with other rules or another encoding (its config.toml's [rules] and "
            "[encoding]) than this run's: set them to its own",
            m_.initial_policy, p.checkpoint_dir));
      // A smaller network of the same kind is grown to this run's shape (grow_mlp: it plays as before).
      const bool same = p.hidden_size == o_.network.hidden_size && p.num_layers == o_.network.num_layers;
      const bool grows = !same && p.hidden_size <= o_.network.hidden_size && p.num_layers <= o_.network.num_layers;
      const bool growable = grows && (p.num_layers == o_.network.num_layers || o_.network.activation == "relu");
      if (p.game != o_.shape.game || p.input_width != W_ || p.num_actions != A_ || p.activation != o_.network.activation ||
          !(same || growable))
        throw InputError(fmt::format(
            "mmd.initial_policy: {} ({}) is a {}×{} {} network on {} ({} inputs, {} actions); this run's "
            "policy is {}×{} {} on {} ({} inputs, {} actions): set network.* to its shape (or a larger one: "
            "more units or, with relu, more layers, to grow it)",
            m_.initial_policy, p.checkpoint_dir, p.num_layers, p.hidden_size, p.activation, p.game, p.input_width, p.num_actions,
            o_.network.num_layers, o_.network.hidden_size, o_.network.activation, o_.shape.game, W_, A_));
      if (grows) {
        p.weights = grow_mlp(p.weights, {.inputs = W_, .outputs = A_, .hidden = p.hidden_size, .layers = p.num_layers},
                             o_.network.hidden_size, o_.network.num_layers, o_.network.activation,
                             derive_seed(o_.seed, kTrainerStream, 1));
        initial_note_ +=
            fmt::format(" (grown from {}×{} to {}×{}: what it adds is read with zero weights, so it plays as before)",
                        p.num_layers, p.hidden_size, o_.network.num_layers, o_.network.hidden_size);
      }
      if (p.weights.size() != static_cast<std::size_t>(nets_.parameters(kPolicyNet)))
        throw InputError(fmt::format("mmd.initial_policy: {} ({}) holds {} policy weights; this run's policy has {}",
                                     m_.initial_policy, p.checkpoint_dir, p.weights.size(), nets_.parameters(kPolicyNet)));
      initial_weights_ = std::move(p.weights);
    }
  }

  int restore(const std::string& ck) override {
    CFR_CHECK(learner(), "restore on a rollout rank");
    const CheckpointMeta meta = read_checkpoint_meta(ck, o_.shape, nets_.specs());
    nets_.load((fs::path(ck) / "nets.pt").string());
    train_rng_.set_state(meta.train_rng);
    // The snapshot opponents live beside the checkpoints (RUN/mmd/snapshots): without every one the
    // run kept, later iterations would draw from another set.
    if (m_.rollout.snapshot_share > 0)
      require_snapshots(snapshot_dir(), m_.snapshot_every, meta.iteration, io_.run_dir, "snapshot opponent",
                        "draw other opponents. Restore it, or start a new run");
    read_league((fs::path(ck) / kLeagueFile).string());
    if (m_.overlap) read_overlap(ck, meta.iteration);
    return meta.iteration;
  }

  bool resume_needs_memories() const override { return false; }

  int train(int first, nlohmann::json first_metrics, const std::string& note) override {
    ctx_.start(first,
               fmt::format("cfr-run: {} on {} — MMD self-play, {} iterations × {} rollouts; networks {}×{} ({} parameters each); "
                           "scheduler {} ({}); run dir {}",
                           o_.experiment_name, o_.shape.game, o_.max_iterations, m_.rollouts_per_iteration, o_.network.num_layers,
                           o_.network.hidden_size, nets_.parameters(kPolicyNet), o_.scheduler, o_.scheduler_options.describe(),
                           io_.run_dir),
               note);
    trim_snapshots(snapshot_dir(), first - 1);
    if (first == 1) {  // the magnet and the opponent start as the policy's initial weights
      if (!initial_weights_.empty()) {
        nets_.set_weights(kPolicyNet, initial_weights_);
        say(fmt::format("the policy starts as {}{}", m_.initial_policy, initial_note_));
      }
      const auto w = nets_.published_weights(kPolicyNet);
      nets_.set_weights(kMagnetNet, w);
      nets_.set_weights(kOpponentNet, w);
    }
    if (resume_rollouts_) try {
        replay_pending_rollouts();
      } catch (const StepInterrupted&) {
        say(
            fmt::format("cfr-run: interrupted while playing again iteration {}'s rollouts; the last checkpoint is "
                        "iteration {}",
                        first, first - 1));
        return first - 1;
      }
    const int done = ctx_.run(
        [&](int it) {
          begin_iteration(it, std::exchange(first_metrics, nullptr));
          if (!pending_) {  // this iteration's rollouts now (always, unless mmd.overlap played them)
            prepare_rollouts(it);
            if (io_.dist != nullptr) announce_iteration();
            pending_ = play_rollouts(it);
          }
          apply_rollouts(*std::exchange(pending_, std::nullopt));
          // mmd.overlap: the next iteration's rollouts play against the weights published now
          // (one iteration stale) while this iteration's samples train.
          if (m_.overlap) launch_rollouts(it + 1);
          train_networks();
          if (m_.overlap) join_rollouts();
          publish_networks();
          move_magnet_and_keep_snapshot();
          evaluate();
          write_metrics();
          write_checkpoint();
          print_iteration();
        },
        [this] {
          for (WorkerThread* w : {&trainer_, &roller_}) try {
              w->wait();
            } catch (...) {  // an interrupted step: the run ends at the last checkpoint
            }
        });
    if (io_.dist != nullptr) io_.dist->broadcast(std::int64_t{0});  // the rollout ranks stop
    return done;
  }

  /// A rollout rank: each iteration the learner announces, its share of the rollouts (the
  /// samples streamed to the learner, its league games recorded for it), until it says stop.
  int serve_learner() override {
    Distributed& dist = *io_.dist;
    int iterations = 0;
    std::vector<float> weights;
    std::vector<double> cumulative;
    while (dist.broadcast(std::int64_t{0}) != 0) {
      it_ = static_cast<int>(dist.broadcast(std::int64_t{0}));
      dist.broadcast(weights);
      nets_.set_published_weights(weights);
      dist.broadcast(cumulative);
      if (cumulative.size() != league_.size())
        throw std::runtime_error(fmt::format("the learner's league draw has {} opponents, this rank's mmd.opponents {}",
                                             cumulative.size(), league_.size()));
      rollout_[0] = rollout_options(it_, cumulative);
      const TraversalShare share = traversal_share(m_.rollouts_per_iteration, dist.rank(), dist.size());
      std::vector<char> record;
      SamplePipe pipe(SW_, mmd_target_width(A_), o_.pipe, [&](const SampleBlock& b) { dist.send_block(b, share.first); });
      LeagueTally tally([&record](int opponent, double learner_return) { put_league_game(record, opponent, learner_return); },
                        pipe);
      const RunStats st = scheduler_->run(rollout_job(share, it_, rollout_[0]), rollout_evaluators(), tally, nullptr);
      pipe.flush();
      dist.send_phase_end(st, record);
      dist.serve_training(nets_);  // a data-parallel learner rank: its shards of the value and policy batches
      ++iterations;
    }
    return iterations;
  }

  ~MmdTrainer() override {
    for (WorkerThread* w : {&trainer_, &roller_}) try {
        w->wait();
      } catch (...) {
      }
  }

 private:
  bool learner() const { return io_.dist == nullptr || io_.dist->learner(); }
  /// distributed.learners > 1: ranks 1..N-1 train their shards of every batch beside the learner,
  /// which then trains the value net and the policy one after the other on its main thread (the
  /// thread that makes its MPI calls).
  bool data_parallel() const { return io_.dist != nullptr && io_.dist->learners() > 1; }

  /// The learner's memories: this iteration's samples (policy rows of 4·A + 1 floats on the first
  /// W floats of a sample's input; the value net's rows are the whole input, SW floats, and the
  /// last column).
  struct Memories {
    Memories(std::int64_t capacity, int W, int SW, int A, std::uint64_t seed)
        : policy(capacity, W, mmd_target_width(A), derive_seed(seed, kMmdMemoryStream)),
          value(capacity, SW, 1, derive_seed(seed, kMmdMemoryStream, 1)) {}
    ReservoirMemory policy, value;
  };

  // --- the distributed protocol: one home for both sides (apps/run/distributed.h) ----------
  // Per iteration the learner sends the command, the iteration, the published weights of the
  // four networks (π, V, the magnet and this iteration's snapshot opponent: every network a
  // rollout queries but the league's, which each rank loads from mmd.opponents and compares with
  // the learner's once, as it starts: Distributed::require_same_as_learner) and the league
  // draw's cumulative probabilities. Rank r plays rollouts traversal_share(n, r, ranks), each
  // from the RNG stream of its global index, so the samples (in rank order) and the league games
  // are those of one process. The league games travel as (opponent, learner's return) pairs in
  // index order; the learner counts them in rank order, as one process counts them.

  /// Learner: the iteration to every rollout rank.
  void announce_iteration() {
    Distributed& dist = *io_.dist;
    dist.broadcast(std::int64_t{1});
    dist.broadcast(std::int64_t{it_});
    std::vector<float> weights = nets_.published_weights();
    dist.broadcast(weights);
    const MmdLeague& league = rollout_[0].league;
    std::vector<double> cumulative(league.cumulative.begin(), league.cumulative.begin() + league.size);
    dist.broadcast(cumulative);
    ctx_.metrics()["ranks"] = dist.size();
    if (data_parallel()) ctx_.metrics()["learners"] = dist.learners();
  }

  static constexpr std::size_t kLeagueGameBytes = sizeof(std::int32_t) + sizeof(double);
  static void put_league_game(std::vector<char>& out, int opponent, double learner_return) {
    const auto o = static_cast<std::int32_t>(opponent);
    char bytes[kLeagueGameBytes];
    std::memcpy(bytes, &o, sizeof o);
    std::memcpy(bytes + sizeof o, &learner_return, sizeof learner_return);
    out.insert(out.end(), bytes, bytes + kLeagueGameBytes);
  }
  /// Learner: rank r's league games, counted; a record that is not whole pairs of a known
  /// opponent and a finite return ends the run naming the rank.
  void count_league_games(const std::vector<char>& record, int rank) {
    if (record.size() % kLeagueGameBytes != 0)
      io_.dist->abort(fmt::format("rank {} sent a league record of {} bytes during iteration {} (not whole games of {} bytes); "
                                  "ending the run",
                                  rank, record.size(), it_, kLeagueGameBytes),
                      5);
    for (std::size_t at = 0; at < record.size(); at += kLeagueGameBytes) {
      std::int32_t opponent = 0;
      double learner_return = 0;
      std::memcpy(&opponent, record.data() + at, sizeof opponent);
      std::memcpy(&learner_return, record.data() + at + sizeof opponent, sizeof learner_return);
      if (opponent < 0 || opponent >= static_cast<int>(league_.size()) || !std::isfinite(learner_return))
        io_.dist->abort(fmt::format("rank {} sent a league game against opponent {} with return {} during iteration {} (the "
                                    "league has {} opponents); ending the run",
                                    rank, opponent, learner_return, it_, league_.size()),
                        5);
      count_league_game(opponent, learner_return);
    }
  }

  /// The policy snapshots the opponent is drawn from: run_dir/mmd/snapshots (not Single Deep
  /// CFR's run_dir/snapshots: these hold one policy network each).
  std::string snapshot_dir() const { return io_.run_dir + "/mmd"; }

  void say(const std::string& line) { ctx_.say(line); }

  /// β_t: bc_weight at iteration 1, linearly down to 0 at iteration bc_fade_iterations (F = 1: 0
  /// from iteration 2 on); 0 after.
  double bc_weight(int it) const {
    const int F = m_.bc_fade_iterations;
    if (F <= 0) return m_.bc_weight;
    if (F == 1) return it <= 1 ? m_.bc_weight : 0.0;
    return m_.bc_weight * std::max(0.0, 1.0 - static_cast<double>(it - 1) / (F - 1));
  }

  /// Iteration `it`'s training: its RNG streams, learning rate and cloning weight.
  void begin_iteration(int it, nlohmann::json extra) {
    it_ = it;
    ctx_.begin_iteration(it, std::move(extra));
    policy_rng_ = Rng(train_rng_());
    value_rng_ = Rng(train_rng_());
    if (o_.learning_rate_decay_iterations > 0) {
      const double lr =
          o_.training.learning_rate / std::sqrt(1.0 + (it - 1) / static_cast<double>(o_.learning_rate_decay_iterations));
      policy_train_.learning_rate = value_train_.learning_rate = lr;
      ctx_.metrics()["learning_rate"] = lr;
    }
    policy_train_.policy_gradient.bc_weight = bc_weight(it);
    ctx_.metrics()["bc_weight"] = policy_train_.policy_gradient.bc_weight;
  }

  /// Iteration k's rollouts: the snapshot opponent (one of the newest snapshots_kept, drawn from
  /// the trainer's stream) and the options with the league's draw as it stands. Sets the
  /// opponent network: no rollout may be running.
  void prepare_rollouts(int k) {
    const std::uint64_t draw = train_rng_();
    int opponent = 0;
    if (m_.rollout.snapshot_share > 0) {
      const auto snaps = list_snapshots(snapshot_dir());
      if (!snaps.empty()) {
        const std::size_t kept = std::min(snaps.size(), static_cast<std::size_t>(m_.snapshots_kept));
        const auto& [snap_it, path] = snaps[snaps.size() - kept + draw % kept];
        nets_.set_weights(kOpponentNet, read_snapshot(path, nets_.parameters(kPolicyNet)));
        opponent = snap_it;
      }
    }
    opponent_[slot(k)] = opponent;
    rollout_[slot(k)] = rollout_options(k, league_draw());
  }

  /// Where iteration k's rollout options and samples live: two alternating slots with
  /// mmd.overlap (iteration k + 1's rollouts fill one while k's samples train from the other).
  int slot(int k) const { return m_.overlap ? k % 2 : 0; }

  /// Iteration `it`'s rollout options, the league drawn with `cumulative` (league_draw()'s).
  MmdRolloutOptions rollout_options(int it, std::span<const double> cumulative) const {
    MmdRolloutOptions r = m_.rollout;  // the bot's moves are asked for only while cloning weighs anything
    r.bc_targets = m_.rollout.bc_targets && bc_weight(it) > 0;
    r.teacher = m_.search.share > 0 && bc_weight(it) > 0 ? &teacher_ : nullptr;  // searched only while cloning weighs anything
    MmdLeague& lg = r.league;
    lg.size = static_cast<int>(league_.size());
    for (std::size_t i = 0; i < league_.size(); ++i) {
      lg.cumulative[i] = cumulative[i];
      lg.bot[i] = static_cast<std::int8_t>(league_[i].bot);
      lg.net[i] = static_cast<std::int8_t>(league_[i].net);
      lg.greedy[i] = league_[i].greedy ? 1 : 0;
    }
    return r;
  }

  // --- the league (mmd.opponents) -----------------------------------------------------------
  static constexpr const char* kLeagueFile = "league.json";

  struct LeagueMember {
    std::string name;             // the mmd.opponents entry
    int bot = -1;                 // index among the game's league bots, or
    int net = -1;                 // index among the fixed networks
    bool greedy = true;           // a network's play (checkpoint: greedy, checkpoint-sampled: its softmax)
    double games = 0, score = 0;  // decayed: games, and wins + draws / 2
    double weight = 0;            // this iteration's draw probability
    std::int64_t it_games = 0, it_wins = 0, it_draws = 0;
    double it_return = 0;
  };

  /// The fixed opponents: bots are the game adapter's league bots (make_mmd_trainer), trained
  /// policies are loaded here and queried as networks kNumMmdNets + j.
  void load_league(const GameSettings& settings, const PolicyLoader& load_policy) {
    int bots = 0;
    for (const auto& entry : m_.opponents) {
      const MmdOpponentName n = parse_mmd_opponent(entry, "mmd.opponents");
      LeagueMember member{.name = entry};
      if (!n.bot.empty()) {
        member.bot = bots++;
      } else {
        if (!load_policy) throw InputError(fmt::format("mmd.opponents: '{}': this program cannot load checkpoints", entry));
        FixedPolicy p = load_policy(n.path, o_.network.invariant_chunk, settings);
        // Every rank reads the checkpoint itself: all must have loaded the learner's (the same
        // path on every node, unchanged meanwhile), or they would play other opponents.
        if (io_.dist != nullptr)
          io_.dist->require_same_as_learner(fmt::format("mmd.opponents: '{}'", entry),
                                            {.path = fs::absolute(p.checkpoint_dir).string(), .digest = league_policy_digest(p)});
        if (p.game != o_.shape.game || p.input_width != W_ || p.num_actions != A_ ||
            (o_.shape.game == "lost_cities" &&
             (!(p.settings.rules == settings.rules) || !(p.settings.encoding == settings.encoding))))
          throw InputError(
              fmt::format("mmd.opponents: '{}' ({}) was trained on {} with another encoding or rules ({} inputs, "
                          "{} actions) than this run's {} ({} inputs, {} actions): it cannot sit at this table",
                          entry, p.checkpoint_dir, p.game, p.input_width, p.num_actions, o_.shape.game, W_, A_));
        member.net = static_cast<int>(fixed_.size());
        member.greedy = n.greedy;
        fixed_.push_back(std::move(p));
      }
      league_.push_back(std::move(member));
    }
  }

  /// Learner: this iteration's draw probabilities, max(1 − r, 0.02)^priority with r = (score + 1) /
  /// (games + 2), as cumulative probabilities (the last is 1).
  std::vector<double> league_draw() {
    std::vector<double> cumulative;
    if (league_.empty()) return cumulative;
    double total = 0;
    for (auto& l : league_) {
      const double r = (l.score + 1.0) / (l.games + 2.0);
      l.weight = std::pow(std::max(1.0 - r, 0.02), m_.opponent_priority);
      total += l.weight;
    }
    double cum = 0;
    for (std::size_t i = 0; i < league_.size(); ++i) {
      league_[i].weight /= total;
      cum += league_[i].weight;
      cumulative.push_back(i + 1 == league_.size() ? 1.0 : cum);
    }
    return cumulative;
  }

  /// One league game of this iteration, against opponent `opponent` (an index into league_).
  void count_league_game(int opponent, double learner_return) {
    LeagueMember& l = league_[static_cast<std::size_t>(opponent)];
    ++l.it_games;
    l.it_wins += learner_return > 0 ? 1 : 0;
    l.it_draws += learner_return == 0 ? 1 : 0;
    l.it_return += learner_return;
  }

  /// Hands each league game, as it is delivered (in index order), to `game` (opponent, the
  /// learner's return), then the rollout on to `next`.
  class LeagueTally final : public SampleSink {
   public:
    LeagueTally(std::function<void(int, double)> game, SampleSink& next) : game_(std::move(game)), next_(next) {}
    void consume(const TraversalContext& ctx) override {
      if (ctx.opponent >= 0) game_(ctx.opponent, ctx.learner_return);
      next_.consume(ctx);
    }

   private:
    std::function<void(int, double)> game_;
    SampleSink& next_;
  };

  void update_league() {
    if (league_.empty()) return;
    nlohmann::json j = nlohmann::json::object();
    for (auto& l : league_) {
      l.games = m_.opponent_decay * l.games + static_cast<double>(l.it_games);
      l.score = m_.opponent_decay * l.score + static_cast<double>(l.it_wins) + 0.5 * static_cast<double>(l.it_draws);
      j[l.name] = {{"draw_probability", l.weight},
                   {"games", l.it_games},
                   {"wins", l.it_wins},
                   {"draws", l.it_draws},
                   {"mean_return", l.it_games > 0 ? l.it_return / static_cast<double>(l.it_games) : 0.0},
                   {"score_rate", (l.score + 1.0) / (l.games + 2.0)}};
      l.it_games = l.it_wins = l.it_draws = 0;
      l.it_return = 0;
    }
    ctx_.metrics()["league"] = std::move(j);
  }

  std::string league_json() const {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& l : league_) j.push_back({{"name", l.name}, {"games", l.games}, {"score", l.score}});
    return j.dump() + "\n";
  }

  /// A checkpoint's league statistics; an opponent it does not list (one added by a resume) starts afresh.
  void read_league(const std::string& path) {
    if (league_.empty() || !fs::exists(path)) return;
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(read_text_file(path));
    } catch (const nlohmann::json::exception& e) {
      throw InputError(fmt::format("{}: not the league's statistics ({})", path, e.what()));
    }
    if (!j.is_array()) throw InputError(fmt::format("{}: not the league's statistics (an array expected)", path));
    for (const auto& e : j) {
      if (!e.is_object() || !e.contains("name") || !e.contains("games") || !e.contains("score") || !e["name"].is_string() ||
          !e["games"].is_number() || !e["score"].is_number())
        throw InputError(fmt::format("{}: an entry without name, games and score", path));
      for (auto& l : league_)
        if (l.name == e["name"].get<std::string>()) {
          l.games = e["games"].get<double>();
          l.score = e["score"].get<double>();
        }
    }
  }

  /// Each row's most probable legal action with probability 1 (the lowest id on ties): how a
  /// checkpoint:PATH opponent plays.
  static void make_greedy(TabularPolicy& policy) {
    const GameTree& tree = policy.tree();
    for (int i = 0; i < tree.num_infosets(); ++i) {
      const ActionMask legal = tree.infoset(i).legal;
      auto row = policy.row(i);
      int best = std::countr_zero(legal);
      for (int a = best + 1; a < static_cast<int>(row.size()); ++a)
        if (mask_has(legal, a) && row[static_cast<std::size_t>(a)] > row[static_cast<std::size_t>(best)]) best = a;
      std::fill(row.begin(), row.end(), 0.0);
      row[static_cast<std::size_t>(best)] = 1.0;
    }
  }

  /// On an enumerable game, each trained opponent's exact figures: the learner's value against it
  /// (both seats averaged) and a best response's (what an exploiter of it can reach at most).
  void evaluate_league_exactly() {
    if constexpr (EnumerableGame<typename G::State>) {
      if (!tree_ || fixed_.empty()) return;
      const TabularPolicy learner = strategy_policy(*tree_, nets_.evaluator(kPolicyNet));
      nlohmann::json j = nlohmann::json::object();
      std::string text;
      for (const auto& l : league_) {
        if (l.net < 0) continue;
        TabularPolicy target = strategy_policy(*tree_, *fixed_[static_cast<std::size_t>(l.net)].evaluator);
        if (l.greedy) make_greedy(target);
        double value = 0;
        for (int seat = 0; seat < 2; ++seat) {  // the learner in `seat`, the target in the other
          TabularPolicy mixed(*tree_);
          for (int i = 0; i < tree_->num_infosets(); ++i) {
            const auto from = tree_->infoset(i).player == seat ? learner.row(i) : target.row(i);
            std::copy(from.begin(), from.end(), mixed.row(i).begin());
          }
          const double v0 = expected_value(mixed);
          value += 0.5 * (seat == 0 ? v0 : -v0);
        }
        const double br = 0.5 * (best_response_value(target, 0) + best_response_value(target, 1));
        j[l.name] = {{"value", value}, {"best_response_value", br}, {"gap", br - value}};
        text += fmt::format("  vs {}: {:.4f} (best response {:.4f})", l.name, value, br);
      }
      ctx_.metrics()["league_exact"] = std::move(j);
      ctx_.eval_text() += text;
    }
  }

  /// Rollouts `share` of iteration k (all of them in one process) with options `o` (which must
  /// outlive the job).
  TraversalJob rollout_job(TraversalShare share, int k, const MmdRolloutOptions& o) const {
    return {.iteration = k,
            .traverser = 0,
            .num_traversals = share.count,
            .first_index = share.first,
            .seed = o_.seed,
            .input_width = SW_,
            .output_width = mmd_target_width(A_),
            .start = [this, &o](TraversalContext& ctx) { return mmd_rollout(ctx, game_, o); }};
  }

  /// What the rollouts query: the set's four networks, then the league's.
  std::vector<Evaluator*> rollout_evaluators() {
    std::vector<Evaluator*> evaluators = nets_.evaluators();
    for (const auto& f : fixed_) evaluators.push_back(f.evaluator);
    return evaluators;
  }

  /// What one iteration's rollouts left for its training: the metrics of the rollouts (merged
  /// into the iteration's by apply_rollouts) and what the log line and the fault report read.
  /// Their league games are already counted (league_'s it_* tallies).
  struct RolloutResult {
    int iteration = 0;
    nlohmann::json metrics;
    double seconds = 0;
    std::int64_t nodes = 0, dropped = 0;
  };

  /// Iteration k's rollouts fill its memories (slot(k)) from nothing (on-policy: samples live one
  /// iteration); the pipe's consumer thread inserts while rollouts run (in a distributed run: the
  /// ranks' samples, in rank order, as they arrive). Touches neither the iteration's metrics nor
  /// the networks: with mmd.overlap it runs on roller_ while the networks train.
  RolloutResult play_rollouts(int k) {
    Memories& mem = *mem_[static_cast<std::size_t>(slot(k))];
    const MmdRolloutOptions& options = rollout_[slot(k)];
    auto& policy_mem = mem.policy;
    auto& value_mem = mem.value;
    policy_mem.reset(derive_seed(o_.seed, kMmdMemoryStream, static_cast<std::uint64_t>(k)));
    value_mem.reset(derive_seed(o_.seed, kMmdMemoryStream, static_cast<std::uint64_t>(k), 1));
    SampleDigest digest;
    std::int64_t dropped = 0;
    double reward_sum = 0;
    const int value_col = 4 * A_;
    const auto t0 = Clock::now();
    auto consume = [&](const SampleBlock& b) {
      digest.add(b.advantage);
      const SampleBuffer& s = b.advantage;
      for (int i = 0; i < s.size(); ++i) {
        const float* in = s.input(i);
        const float* t = s.target(i);
        bool finite = true;
        for (int c = 0; c < SW_ && finite; ++c) finite = std::isfinite(in[c]);
        for (int c = 0; c < mmd_target_width(A_) && finite; ++c) finite = std::isfinite(t[c]);
        if (!finite) {
          ++dropped;
          continue;
        }
        policy_mem.insert(in, t, s.masks[static_cast<std::size_t>(i)], k);
        value_mem.insert(in, t + value_col, ActionMask{1}, k);
        reward_sum += t[value_col];
      }
    };
    RunStats st;
    if (io_.dist != nullptr) {
      std::vector<std::vector<char>> records;
      st = io_.dist->receive_phase(SW_, mmd_target_width(A_), consume, o_.distributed_timeout_seconds,
                                   fmt::format("iteration {}, rollouts", k), &records);
      for (std::size_t r = 0; r < records.size(); ++r) count_league_games(records[r], static_cast<int>(r) + 1);
    } else {
      SamplePipe pipe(SW_, mmd_target_width(A_), o_.pipe, consume);
      LeagueTally tally(
          [this](int opponent, double learner_return) {
            if (opponent < static_cast<int>(league_.size())) count_league_game(opponent, learner_return);
          },
          pipe);
      st = scheduler_->run(rollout_job({.first = 0, .count = m_.rollouts_per_iteration}, k, options), rollout_evaluators(), tally,
                           io_.stop);
      pipe.flush();
    }
    RolloutResult r{
        .iteration = k, .metrics = nlohmann::json::object(), .seconds = since(t0), .nodes = st.nodes, .dropped = dropped};
    if (st.stopped) throw StepInterrupted{"rollouts"};
    nlohmann::json& m = r.metrics;
    m["opponent_snapshot"] = opponent_[slot(k)];
    m["rollouts"] = st.traversals;
    m["rollout_seconds"] = r.seconds;
    m["nodes"] = st.nodes;
    m["nodes_per_second"] = r.seconds > 0 ? st.nodes / r.seconds : 0.0;
    m["mean_game_actions"] = st.traversals > 0 ? static_cast<double>(st.nodes) / st.traversals : 0.0;
    m["cutoff_share"] = st.traversals > 0 ? static_cast<double>(st.cutoffs) / st.traversals : 0.0;
    m["batch_mean"] = st.batch.mean_batch();
    m["forwards"] = st.batch.forwards;
    m["samples"] = policy_mem.seen();
    m["samples_kept"] = policy_mem.size();
    m["samples_dropped_nonfinite"] = dropped;
    m["mean_value_target"] = policy_mem.seen() > 0 ? reward_sum / static_cast<double>(policy_mem.seen()) : 0.0;
    m["sample_digest"] = fmt::format("{:016x}", digest.value());
    if (options.teacher != nullptr) {  // the search teacher's work in these rollouts
      const auto searches = teacher_.searches.exchange(0), overriding = teacher_.overriding.exchange(0);
      m["search"] = {{"decisions", searches},
                     {"overriding_share", searches > 0 ? static_cast<double>(overriding) / static_cast<double>(searches) : 0.0},
                     {"moves", teacher_.moves.exchange(0)},
                     {"forwards", teacher_.forwards.exchange(0)}};
    }
    return r;
  }

  /// The rollouts of this iteration (it_), played now or during the iteration before: their
  /// metrics join the iteration's, their league games the league's statistics.
  void apply_rollouts(const RolloutResult& r) {
    CFR_CHECK(r.iteration == it_, "rollouts of iteration {} applied in iteration {}", r.iteration, it_);
    rollout_s_ = r.seconds;
    nodes_ = r.nodes;
    dropped_ = r.dropped;
    ctx_.metrics().update(r.metrics);
    ctx_.metrics()["overlap"] = m_.overlap;
    update_league();
  }

  /// mmd.overlap: iteration k's rollouts start on roller_ against the networks published now
  /// (those of iteration k - 2: this iteration's training publishes after join_rollouts).
  void launch_rollouts(int k) {
    prepare_rollouts(k);
    // What a resume needs to play them again: the weights they play against (overlap files).
    pending_weights_.clear();
    for (int net : {kPolicyNet, kMmdValueNet, kMagnetNet}) {
      const auto w = nets_.published_weights(net);
      pending_weights_.insert(pending_weights_.end(), w.begin(), w.end());
    }
    roller_.submit([this, k] { launched_ = play_rollouts(k); });
  }

  /// Waits for the launched rollouts (rethrowing what stopped them); they are the next
  /// iteration's. The time spent waiting is the overlap's cost.
  void join_rollouts() {
    const auto t0 = Clock::now();
    roller_.wait();
    pending_ = std::exchange(launched_, std::nullopt);
    ctx_.metrics()["rollout_wait_seconds"] = since(t0);
  }

  /// A resumed overlapped run: the checkpoint's next rollouts played again against the weights
  /// they were played against (its overlap files), then the checkpoint's weights back.
  void replay_pending_rollouts() {
    const int k = resume_rollouts_->iteration;
    std::vector<std::vector<float>> now;
    std::size_t at = 0;
    for (int net : {kPolicyNet, kMmdValueNet, kMagnetNet}) {
      now.push_back(nets_.published_weights(net));
      const auto n = now.back().size();
      nets_.set_weights(net, std::span<const float>(resume_rollouts_->weights).subspan(at, n));
      at += n;
    }
    opponent_[slot(k)] = resume_rollouts_->opponent;
    if (resume_rollouts_->opponent > 0)
      nets_.set_weights(kOpponentNet,
                        read_snapshot(snapshot_path(snapshot_dir(), resume_rollouts_->opponent), nets_.parameters(kPolicyNet)));
    rollout_[slot(k)] = rollout_options(k, league_draw());
    pending_weights_ = std::move(resume_rollouts_->weights);
    resume_rollouts_.reset();
    pending_ = play_rollouts(k);
    int i = 0;
    for (int net : {kPolicyNet, kMmdValueNet, kMagnetNet}) nets_.set_weights(net, now[static_cast<std::size_t>(i++)]);
  }

  // --- mmd.overlap's checkpoint files (apps/algorithms/overlap.h): the next iteration's rollouts ---
  std::vector<std::pair<std::string, std::string>> overlap_files() const {
    if (!pending_) return {};
    return cfr::overlap_files({.iteration = pending_->iteration,
                               .fields = {{"opponent_snapshot", opponent_[slot(pending_->iteration)]}},
                               .weights = pending_weights_});
  }

  void read_overlap(const std::string& ck, int iteration) {
    const std::size_t want =
        static_cast<std::size_t>(nets_.parameters(kPolicyNet) + nets_.parameters(kMmdValueNet) + nets_.parameters(kMagnetNet));
    static constexpr const char* kFields[] = {"opponent_snapshot"};
    std::optional<OverlapRecord> r = read_overlap_files(ck, "mmd.overlap", iteration + 1, want, kFields);
    if (!r) return;  // written without mmd.overlap: the next rollouts play now
    resume_rollouts_ = PendingRollouts{
        .iteration = r->iteration, .opponent = r->fields["opponent_snapshot"].get<int>(), .weights = std::move(r->weights)};
  }

  int updates_for(std::int64_t rows) const {
    return static_cast<int>(std::max<std::int64_t>(1, (m_.epochs * rows + m_.batch_size - 1) / m_.batch_size));
  }

  /// The value net on the trainer thread while the policy trains here, on this iteration's samples.
  void train_networks() {
    const auto t0 = Clock::now();
    Memories& mem = *mem_[static_cast<std::size_t>(slot(it_))];
    value_train_.updates = updates_for(mem.value.rows());
    policy_train_.updates = updates_for(mem.policy.rows());
    if (data_parallel()) {  // one network after the other, every MPI call from this thread
      value_stats_ = io_.dist->train(nets_, kMmdValueNet, mem.value, it_, value_train_, value_rng_);
      if (m_.train_policy) policy_stats_ = io_.dist->train(nets_, kPolicyNet, mem.policy, it_, policy_train_, policy_rng_);
    } else if (!m_.train_policy) {  // mmd.train_policy = false: the critic alone
      value_stats_ = nets_.train(kMmdValueNet, mem.value, it_, value_train_, value_rng_);
    } else {
      trainer_.submit([this, &mem] { value_stats_ = nets_.train(kMmdValueNet, mem.value, it_, value_train_, value_rng_); });
      policy_stats_ = nets_.train(kPolicyNet, mem.policy, it_, policy_train_, policy_rng_);
      trainer_.wait();
    }
    if (policy_stats_.stopped || value_stats_.stopped) throw StepInterrupted{"training"};
    train_s_ = since(t0);
  }

  /// After the rollouts that were playing have ended: the faults counted, both networks published.
  void publish_networks() {
    check_numeric_faults();
    nets_.publish(kPolicyNet);
    nets_.publish(kMmdValueNet);
    const auto& pg = policy_stats_.policy_gradient;
    ctx_.metrics()["train_seconds"] = train_s_;
    ctx_.metrics()["loss_policy"] = policy_stats_.mean_loss;
    ctx_.metrics()["loss_value"] = value_stats_.mean_loss;
    ctx_.record_loss(nets_.spec(kPolicyNet).name, policy_stats_.mean_loss);
    ctx_.record_loss(nets_.spec(kMmdValueNet).name, value_stats_.mean_loss);
    ctx_.metrics()["policy_gradient"] = {
        {"surrogate", pg.surrogate}, {"magnet_kl", pg.magnet_kl},         {"bot_cross_entropy", pg.bot_cross_entropy},
        {"entropy", pg.entropy},     {"clipped_share", pg.clipped_share}, {"steps", policy_stats_.steps}};
    ctx_.metrics()["value_steps"] = value_stats_.steps;
    ctx_.metrics()["grad_norm"] = {policy_stats_.mean_grad_norm, value_stats_.mean_grad_norm};
    ctx_.metrics()["skipped_nonfinite_steps"] = policy_stats_.skipped_nonfinite + value_stats_.skipped_nonfinite;
  }

  /// Non-finite values (docs/deep-cfr.md "Numeric faults"): network outputs replaced by 0 during
  /// the rollouts (any of the four networks), samples dropped, training steps skipped; reported in
  /// the metrics and the log. Non-finite weights always stop the run; with
  /// optimization.nonfinite_policy = "stop" any fault does.
  void check_numeric_faults() {
    std::vector<NetworkFaultCounts> counts(static_cast<std::size_t>(nets_.size()));
    counts[kPolicyNet] = {.samples_dropped = dropped_, .steps_skipped = policy_stats_.skipped_nonfinite};
    counts[kMmdValueNet] = {.samples_dropped = 0, .steps_skipped = value_stats_.skipped_nonfinite};
    ctx_.collect_numeric_faults(nets_, counts);
    ctx_.check_numeric_faults();
  }

  /// MMD's magnet moves to the current policy every magnet_every iterations (so the iterates
  /// converge to an equilibrium rather than to the first magnet's regularised one); a snapshot
  /// of the policy joins the opponents every snapshot_every.
  void move_magnet_and_keep_snapshot() {
    const bool move = m_.magnet_every > 0 && it_ % m_.magnet_every == 0;
    const bool snap = m_.rollout.snapshot_share > 0 && it_ % m_.snapshot_every == 0;
    if (move || snap) {
      const auto w = nets_.published_weights(kPolicyNet);
      if (move) nets_.set_weights(kMagnetNet, w);
      if (snap) write_snapshot(snapshot_dir(), it_, w);
    }
    ctx_.metrics()["magnet_moved"] = move;
  }

  /// The shared evaluation of the policy (exact on Kuhn/Leduc, bots on Lost Cities).
  void evaluate() {
    ctx_.evaluate(nets_.evaluator(kPolicyNet), game_, tree_ ? &*tree_ : nullptr, [this] { evaluate_league_exactly(); });
  }

  void write_metrics() { ctx_.write_metrics(); }

  void write_checkpoint() {
    std::vector<std::pair<std::string, std::string>> extra = overlap_files();
    if (!league_.empty()) extra.emplace_back(kLeagueFile, league_json());
    ctx_.write_checkpoint(nets_, train_rng_.state(), nullptr, std::move(extra));
  }

  void print_iteration() {
    const auto& pg = policy_stats_.policy_gradient;
    ctx_.print_iteration(fmt::format(
        "rollouts {:.1f}s ({:.0f} actions/s)  train {:.1f}s  policy {:.3g} (KL magnet {:.3g}, entropy {:.3g}{})  value {:.3g}  "
        "digest {}",
        rollout_s_, rollout_s_ > 0 ? nodes_ / rollout_s_ : 0.0, train_s_, policy_stats_.mean_loss, pg.magnet_kl, pg.entropy,
        policy_train_.policy_gradient.bc_weight > 0
            ? fmt::format(", {} CE {:.3g}{}", m_.teacher, pg.bot_cross_entropy, search_note())
            : "",
        value_stats_.mean_loss, ctx_.metrics()["sample_digest"].get<std::string>()));
  }

  /// ", N searched, x% overriding" for the log line (the search teacher's, this iteration).
  std::string search_note() {
    const auto& m = ctx_.metrics();
    if (!m.contains("search")) return "";
    return fmt::format(": {} searched, {:.0f}% overriding", m["search"]["decisions"].get<std::int64_t>(),
                       100 * m["search"]["overriding_share"].get<double>());
  }

  const RunOptions o_;
  const MmdOptions m_;
  const TrainerIo io_;
  const G game_;
  const int W_, A_;
  const int SW_;  // a sample's input: W_, 2·W_ or 2·W_ + the world's with mmd.value_input = "full" or "world" (mmd_sample_width)
  NetworkSet nets_;
  std::optional<TeacherNets> teacher_nets_;  // mmd.teacher = "search"
  mutable MmdSearchTeacher teacher_;         // rollout_options() (const) hands it out; the rollouts count into it
  std::unique_ptr<Scheduler> scheduler_;
  std::optional<Memories> mem_[2];  // the learner's only; [1] with mmd.overlap (slot())
  Rng train_rng_, policy_rng_, value_rng_;
  TrainConfig policy_train_, value_train_;
  MmdRolloutOptions rollout_[2];           // by slot() (prepare_rollouts)
  int opponent_[2] = {0, 0};               // the snapshot opponent's iteration, by slot() (0: none)
  std::optional<RolloutResult> pending_;   // the next iteration's rollouts, played (mmd.overlap)
  std::optional<RolloutResult> launched_;  // written by roller_ (launch_rollouts)
  std::vector<float> pending_weights_;     // what pending_ played against: π, V, magnet
  struct PendingRollouts {
    int iteration = 0, opponent = 0;
    std::vector<float> weights;
  };
  std::optional<PendingRollouts> resume_rollouts_;  // read_overlap: played again as train() starts
  TrainStats policy_stats_, value_stats_;
  std::optional<GameTree> tree_;
  std::vector<FixedPolicy> fixed_;      // the league's trained opponents (networks kNumMmdNets + j)
  std::vector<LeagueMember> league_;    // mmd.opponents, in order
  std::vector<float> initial_weights_;  // mmd.initial_policy's
  std::string initial_note_;            // how they were adapted to this run, if they were
  std::int64_t dropped_ = 0, nodes_ = 0;
  int it_ = 0;
  double rollout_s_ = 0, train_s_ = 0;
  RunContext ctx_{o_, io_};  // the log, metrics, evaluation, faults, checkpoints
  WorkerThread trainer_;     // last: joined first, while what its jobs read still exists
  WorkerThread roller_;      // mmd.overlap's rollouts
};

}  // namespace

std::unique_ptr<Trainer> make_mmd_trainer(const TrainerSetup& setup) {
  const MmdOptions m = mmd_options(setup.config);
  if (m.rollout.opponent_share > 0 && m.opponents.empty())
    throw InputError(
        fmt::format("mmd.opponent_share = {} with no mmd.opponents: list the league's opponents (bots or "
                    "checkpoint:PATH), e.g. --set 'mmd.opponents=[\"checkpoint:RUN_DIR\"]'",
                    m.rollout.opponent_share));
  GameSettings game = setup.game;  // the league's bots, in mmd.opponents order
  for (const auto& entry : m.opponents)
    if (const MmdOpponentName n = parse_mmd_opponent(entry, "mmd.opponents"); !n.bot.empty()) game.league_bots.push_back(n.bot);
  return visit_registered_game(setup.run.shape.game, [&]<class R>(R) -> std::unique_ptr<Trainer> {
    return std::make_unique<MmdTrainer<typename R::Adapter>>(setup.run, m, setup.io, R::Adapter::from_settings(game), game,
                                                             setup.load_policy);
  });
}

}  // namespace cfr
