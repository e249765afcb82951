#pragma once
// One run's bookkeeping, composed by every trainer (apps/algorithms/<name>/trainer.cc), which keeps
// only its own steps: the log (stdout and log.txt), metrics.jsonl (one line per iteration), the
// loop over iterations (stop requests, the time budget, an abandoned step), the evaluation
// schedule and the evaluation of the network that plays (exact exploitability on enumerable
// games, batched matches against the bots on games with bots), the numeric-fault report, the
// checkpoints and the ETA. One home, so that every algorithm's runs have the same files, the same
// metrics keys for the same things and the same behaviour at their end.
//
// Used by the learner's thread only (a trainer's helper threads never touch it).
#include <chrono>
#include <cstdint>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

#include "apps/algorithms/run_steps.h"
#include "apps/algorithms/trainer.h"
#include "apps/run/checkpoints.h"
#include "apps/run/options.h"
#include "apps/run/run_files.h"
#include "engine/tabular/game_tree.h"
#include "engine/traversal/traversal_games.h"

namespace cfr {

class Evaluator;
class NetworkSet;

/// What a trainer knows of one network's numeric faults this iteration (its non-finite outputs
/// and weights are read from the NetworkSet).
struct NetworkFaultCounts {
  std::int64_t samples_dropped = 0;  // samples with non-finite inputs or targets not stored
  std::int64_t steps_skipped = 0;    // training steps with a non-finite loss skipped
};

class RunContext {
 public:
  RunContext(const RunOptions& run, const TrainerIo& io);

  /// Opens metrics.jsonl and log.txt (appending: the driver prepared the run directory), says
  /// `headline` and `note` (when not empty) and starts the run's clock; iterations first, first + 1, ...
  void start(int first, const std::string& headline, const std::string& note);
  /// A line on stdout and in log.txt.
  void say(const std::string& line);
  /// The loop over iterations start()'s first .. run.max_iterations: a stop request before an
  /// iteration ends the run, and so does run.max_minutes once an iteration's evaluation found it
  /// spent (that iteration was evaluated: see evaluation_iteration); a StepInterrupted abandons
  /// the iteration; `wait` lets the trainer's thread finish on the way out. Returns the last
  /// iteration completed.
  int run(const std::function<void(int iteration)>& iteration, const std::function<void()>& wait);

  /// Iteration `it` begins: its metrics line is {"iteration": it} with `extra` merged in (a
  /// resume's record).
  void begin_iteration(int it, nlohmann::json extra);
  int iteration() const noexcept { return it_; }
  /// This iteration's metrics line (the trainer adds its own keys).
  nlohmann::json& metrics() noexcept { return m_; }
  /// What this iteration's evaluation and diagnostics add to its log line.
  std::string& eval_text() noexcept { return eval_text_; }

  /// Whether this iteration evaluates: every run.eval_every, the last iteration, and the first
  /// one that asks after run.max_minutes has run out, which is then the run's last (so that a run
  /// stopped by its budget ends with an evaluation). A trainer asks every iteration (evaluate()
  /// does); it may ask earlier in the iteration too (ESCHER's value diagnostics).
  bool evaluation_iteration();
  /// On evaluation iterations, the evaluation of `policy` (the network that plays: logits over
  /// the actions): on an enumerable game (`tree`) its exact exploitability ("nash_conv",
  /// "exploitability", run_dir/policy.json); on a game with bots (Lost Cities) matches against
  /// evaluation.opponents ("evaluation"; none when evaluation.games = 0); "eval_seconds". A stop
  /// request during the matches abandons the iteration (StepInterrupted). `extra` runs after the
  /// exact evaluation, inside the timing (a trainer's own diagnostics). Returns the exact
  /// exploitability when computed.
  template <class G>
  std::optional<double> evaluate(Evaluator& policy, const G& game, const GameTree* tree,
                                 const std::function<void()>& extra = nullptr) {
    if (!evaluation_iteration()) return std::nullopt;
    const auto t0 = std::chrono::steady_clock::now();
    std::optional<double> x;
    if (tree != nullptr) {
      x = evaluate_exactly(policy, *tree);
      if (extra) extra();
    } else if constexpr (std::is_same_v<G, LostCitiesTraversalGame>) {
      evaluate_bots(policy, game);
    }
    m_["eval_seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return x;
  }

  /// Numeric faults (docs/deep-cfr.md "Numeric faults"), before the evaluation's own forwards:
  /// per network of `nets` (counts[n] for network n; missing entries count 0) the non-finite
  /// output values replaced by 0 since the last call, the samples dropped, the training steps
  /// skipped and whether its weights are finite, into metrics "nonfinite" by network name (the
  /// same keys for every algorithm). Remembers what to report.
  void collect_numeric_faults(NetworkSet& nets, const std::vector<NetworkFaultCounts>& counts);
  /// Says the faults collected, if any; non-finite weights, or any fault with
  /// optimization.nonfinite_policy = "stop", end the run (NumericError naming the last checkpoint).
  void check_numeric_faults();

  /// Network `network`'s mean training loss this iteration: metrics "losses" by network name (the
  /// curves cfr-plot draws for every algorithm).
  void record_loss(const std::string& network, double mean_loss) { m_["losses"][network] = mean_loss; }
  /// Appends this iteration's metrics line (with iteration_seconds, elapsed_seconds, rss_bytes).
  void write_metrics();
  /// This iteration's checkpoint (run_dir/checkpoints/iter-N, `latest`; write_checkpoint_dir).
  void write_checkpoint(const NetworkSet& nets, const Rng::StateWords& train_rng,
                        std::function<void(const std::string& path)> write_memories = nullptr,
                        std::vector<std::pair<std::string, std::string>> extra_files = {});
  /// The latest checkpoint's iteration (first - 1 before this run wrote one).
  int latest_checkpoint() const noexcept { return latest_checkpoint_; }
  /// Says the iteration's line: "iter N/M  {body}{eval text}  ETA Ns".
  void print_iteration(const std::string& body);

  double elapsed_seconds() const;
  double iteration_seconds() const;

 private:
  double evaluate_exactly(Evaluator& policy, const GameTree& tree);
  void evaluate_bots(Evaluator& policy, const LostCitiesTraversalGame& game);

  const RunOptions run_;
  const TrainerIo io_;
  std::optional<MetricsFile> metrics_file_;
  std::ofstream log_;
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now(), started_it_ = started_;
  int first_ = 1, it_ = 0, latest_checkpoint_ = 0;
  nlohmann::json m_;
  std::string eval_text_, fault_report_;
  bool weights_bad_ = false;
  bool out_of_time_ = false;  // run.max_minutes spent: this iteration evaluates and is the last
};

/// The bar of a live progress line: width × done / total '#', clamped to [0, width], computed in
/// 64 bits (30 × done in int overflowed past 71.6 million traversals; a phase may have 100 million).
std::string progress_bar(std::int64_t done, std::int64_t total, int width = 30);

}  // namespace cfr
