#include "apps/algorithms/context.h"

#include <algorithm>
#include <cstdio>

#include <fmt/format.h>

#include "apps/players/evaluation.h"
#include "apps/run/streams.h"
#include "engine/core/errors.h"
#include "engine/core/resources.h"
#include "engine/tabular/best_response.h"
#include "nets/networks.h"

namespace cfr {

namespace {
double since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}
}  // namespace

RunContext::RunContext(const RunOptions& run, const TrainerIo& io) : run_(run), io_(io) {}

void RunContext::start(int first, const std::string& headline, const std::string& note) {
  metrics_file_.emplace(io_.run_dir + "/metrics.jsonl");
  log_.open(io_.run_dir + "/log.txt", std::ios::app);
  say(headline);
  // fp32 (the default) says nothing; bf16 and auto say what the networks compute in (the
  // driver's one resolution of network.precision, RunOptions::precision_note).
  if (!run_.precision_note.empty()) say(run_.precision_note);
  if (!note.empty()) say(note);
  first_ = first;
  latest_checkpoint_ = first - 1;
  started_ = std::chrono::steady_clock::now();
}

void RunContext::say(const std::string& line) {
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
  log_ << line << "\n";
  log_.flush();
}

int RunContext::run(const std::function<void(int)>& iteration, const std::function<void()>& wait) {
  int done = first_ - 1;
  for (int it = first_; it <= run_.max_iterations; ++it) {
    if (io_.stop != nullptr && io_.stop->load()) {
      say(fmt::format("cfr-run: stopped before iteration {}; the last checkpoint is iteration {}", it, latest_checkpoint_));
      break;
    }
    if (out_of_time_) {  // decided by the evaluation of the iteration before, which was evaluated
      say(fmt::format("cfr-run: run.max_minutes = {} reached", run_.max_minutes));
      break;
    }
    try {
      iteration(it);
      done = it;
    } catch (const StepInterrupted& i) {
      say(fmt::format("cfr-run: interrupted during iteration {}'s {}; the last checkpoint is iteration {}", it, i.step,
                      latest_checkpoint_));
      wait();
      break;
    } catch (...) {
      wait();
      throw;
    }
  }
  return done;
}

void RunContext::begin_iteration(int it, nlohmann::json extra) {
  it_ = it;
  started_it_ = std::chrono::steady_clock::now();
  m_ = {{"iteration", it}};
  if (!extra.is_null()) m_.update(extra);
  eval_text_.clear();
  fault_report_.clear();
  weights_bad_ = false;
}

bool RunContext::evaluation_iteration() {
  if (run_.max_minutes > 0 && since(started_) > run_.max_minutes * 60) out_of_time_ = true;
  return (run_.eval_every > 0 && it_ % run_.eval_every == 0) || it_ == run_.max_iterations || out_of_time_;
}

double RunContext::evaluate_exactly(Evaluator& policy, const GameTree& tree) {
  const TabularPolicy pol = strategy_policy(tree, policy);
  const auto r = exploitability(pol);
  write_policy_file(io_.run_dir + "/policy.json", pol);
  m_["nash_conv"] = r.nash_conv;
  m_["exploitability"] = r.exploitability;
  eval_text_ += fmt::format("  exploitability {:.4f} ({:.0f} mA/g)", r.exploitability, 1e3 * r.exploitability);
  return r.exploitability;
}

void RunContext::evaluate_bots(Evaluator& policy, const LostCitiesTraversalGame& game) {
  auto r = evaluate_against_bots(policy, game,
                                 {.opponents = run_.eval_opponents,
                                  .games = run_.eval_games,
                                  .seed = derive_seed(run_.seed, kEvaluationStream, static_cast<std::uint64_t>(it_)),
                                  .max_steps = run_.eval_max_steps,
                                  .rules = run_.rules,
                                  .play = run_.eval_play,
                                  .stop = io_.stop});
  if (r.stopped) throw StepInterrupted{"evaluation"};
  eval_text_ += r.text;
  if (!r.reports.empty()) m_["evaluation"] = std::move(r.reports);  // none when evaluation.games = 0
}

void RunContext::collect_numeric_faults(NetworkSet& nets, const std::vector<NetworkFaultCounts>& counts) {
  nlohmann::json nf = nlohmann::json::object();
  for (int n = 0; n < nets.size(); ++n) {
    const NetworkFaultCounts c =
        static_cast<std::size_t>(n) < counts.size() ? counts[static_cast<std::size_t>(n)] : NetworkFaultCounts{};
    const std::int64_t outs = nets.take_nonfinite_outputs(n);
    const bool finite = nets.weights_finite(n);
    weights_bad_ = weights_bad_ || !finite;
    const std::string& name = nets.spec(n).name;
    nf[name] = {{"outputs", outs},
                {"samples_dropped", c.samples_dropped},
                {"steps_skipped", c.steps_skipped},
                {"weights_finite", finite}};
    if (outs || c.samples_dropped || c.steps_skipped || !finite)
      fault_report_ += fmt::format(
          "{}network {}: {} non-finite output value(s) replaced by 0, {} sample(s) with non-finite "
          "values dropped, {} training step(s) with a non-finite loss skipped{}",
          fault_report_.empty() ? "" : "; ", name, outs, c.samples_dropped, c.steps_skipped,
          finite ? "" : ", weights are not finite");
  }
  m_["nonfinite"] = nf;
}

void RunContext::check_numeric_faults() {
  if (fault_report_.empty()) return;
  say(fmt::format("cfr-run: iteration {}: {}", it_, fault_report_));
  if (weights_bad_ || run_.nonfinite == NonfinitePolicy::kStop)
    throw NumericError(
        fmt::format("iteration {}: {}; {}; the last checkpoint is iteration {} (resume with --resume {})", it_, fault_report_,
                    weights_bad_ ? "non-finite weights cannot be skipped" : "optimization.nonfinite_policy = 'stop'",
                    latest_checkpoint_, io_.run_dir));
}

double RunContext::elapsed_seconds() const { return since(started_); }
double RunContext::iteration_seconds() const { return since(started_it_); }

void RunContext::write_metrics() {
  m_["iteration_seconds"] = since(started_it_);
  m_["elapsed_seconds"] = since(started_);
  m_["rss_bytes"] = resident_bytes();
  metrics_file_->append(m_.dump() + "\n");
}

void RunContext::write_checkpoint(const NetworkSet& nets, const Rng::StateWords& train_rng,
                                  std::function<void(const std::string& path)> write_memories,
                                  std::vector<std::pair<std::string, std::string>> extra_files) {
  write_checkpoint_dir(nets, {.run_dir = io_.run_dir,
                              .iteration = it_,
                              .config_toml = io_.config_toml,
                              .shape = run_.shape,
                              .train_rng = train_rng,
                              .write_memories = std::move(write_memories),
                              .extra_files = std::move(extra_files),
                              .save_every = run_.save_every,
                              .previous_latest = latest_checkpoint_});
  latest_checkpoint_ = it_;
}

void RunContext::print_iteration(const std::string& body) {
  const double elapsed = since(started_);
  const int left = run_.max_iterations - it_, ran = it_ - first_ + 1;
  const double eta = run_.max_minutes > 0 ? std::min(elapsed / ran * left, std::max(0.0, run_.max_minutes * 60 - elapsed))
                                          : elapsed / ran * left;
  say(fmt::format("iter {:>4}/{}  {}{}  ETA {:.0f}s", it_, run_.max_iterations, body, eval_text_, eta));
}

std::string progress_bar(std::int64_t done, std::int64_t total, int width) {
  if (total <= 0 || done <= 0 || width <= 0) return {};
  return std::string(static_cast<std::size_t>(std::min<std::int64_t>(width, width * std::min(done, total) / total)), '#');
}

}  // namespace cfr
