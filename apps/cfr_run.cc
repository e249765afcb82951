// cfr-run: Deep CFR training from a TOML config.
//   cfr-run CONFIG.toml [--set section.key=value]... [--run-dir DIR] [--print-config]
//   cfr-run --resume RUN_DIR [--set section.key=value]...
//   mpirun -np N cfr-run CONFIG.toml ...   (rank 0 learns, ranks 1..N-1 traverse: apps/run/distributed.h)
#include <atomic>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <unistd.h>  // isatty

#include <fmt/format.h>

#include "apps/cli.h"
#include "apps/run/config.h"
#include "apps/run/distributed.h"
#include "apps/run/stop_signals.h"
#include "apps/train/driver.h"
#include "engine/core/errors.h"
#include "engine/core/files.h"
#include "engine/core/resources.h"

/// optimization.nonfinite_policy = "stop" (or non-finite weights) ended the run.
constexpr int kExitNumericStop = 4;

int main(int argc, char** argv) {
  cfr::select_blas_kernels(argv);  // before any thread: OpenBLAS's kernels for this CPU (engine/core/resources.h)
  CLI::App app{"cfr-run: train Deep CFR on Lost Cities, Kuhn or Leduc poker from a TOML config"};
  std::string config_path, run_dir, resume;
  std::vector<std::string> sets;
  bool print_config = false, distributed = false, allow_training_changes = false;
  auto* cfg_opt = app.add_option("CONFIG", config_path, "TOML config (configs/*.toml)")->check(cfr::kNonEmpty);
  app.add_option("--resume", resume, "continue the run in RUN_DIR from its latest checkpoint (its config.toml)")
      ->check(cfr::kNonEmpty)
      ->excludes(cfg_opt);
  app.add_option("--set", sets, "override one key: section.key=value (repeatable)");
  app.add_flag("--allow-training-changes", allow_training_changes,
               "with --resume: accept other values of keys that change what the run computes (the run is then not "
               "the same run as an uninterrupted one; it says so)");
  app.add_option("--run-dir", run_dir, "run directory (default runs/<experiment>-<time>)")->check(cfr::kNonEmpty);
  app.add_flag("--print-config", print_config, "print the resolved config and exit");
  app.add_flag("--distributed", distributed,
               "run as one process of an MPI job (implied under mpirun with ≥ 2 processes): rank 0 learns, the others traverse");
  if (const auto rc = cfr::parse_command_line(app, "cfr-run", argc, argv)) return *rc;
  std::unique_ptr<cfr::Distributed> dist;
  // Errors end every process of a distributed job (the others would wait forever).
  auto fail = [&](const std::string& message, int code) -> int {
    if (dist && dist->size() > 1) dist->abort(message, code);
    std::cerr << message << "\n";
    return code;
  };
  try {
    if (distributed || cfr::Distributed::launched_by_mpi()) {
      dist = cfr::Distributed::init(&argc, &argv);
      if (dist->size() < 2) dist.reset();  // a single process: no roles
    }
    cfr::Config cfg;
    if (!dist || dist->learner()) {
      if (config_path.empty() && resume.empty()) throw cfr::InputError("give a CONFIG.toml, or --resume RUN_DIR");
      if (allow_training_changes && resume.empty()) throw cfr::InputError("--allow-training-changes needs --resume RUN_DIR");
      if (!resume.empty()) {
        if (!run_dir.empty() && run_dir != resume)
          throw cfr::InputError("--resume RUN_DIR already names the run directory; drop --run-dir");
        cfr::require_directory(resume, "--resume");
        run_dir = resume;
        config_path = resume + "/config.toml";
      }
      cfg = cfr::load_config(config_path);
      for (const auto& s : sets) cfr::apply_override(cfg, s);
      cfr::validate(cfg);
      if (dist) dist->set_timeout(cfg.distributed.timeout_seconds);
    }
    if (dist) {  // the learner's resolved config to every traversal rank (empty: nothing to run)
      std::string text = dist->learner() && !print_config ? cfr::to_toml(cfg) : std::string();
      dist->broadcast(text);
      if (!dist->learner()) {
        if (text.empty()) return 0;
        cfg = cfr::parse_config(text, "config from rank 0");
        cfr::validate(cfg);
      }
    }
    if (print_config) {
      std::cout << cfr::to_toml(cfg);
      return 0;
    }
    if (run_dir.empty()) {
      char stamp[32];
      const std::time_t now = std::time(nullptr);
      std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", std::localtime(&now));
      run_dir = fmt::format("runs/{}-{}", cfg.run.experiment_name, stamp);
    }
    // SIGINT/SIGTERM: the first stops the run after the current step (traversal batch, training
    // step or evaluation move; the latest checkpoint stays the last completed iteration); a second
    // exits at once with 128 + the signal (checkpoints are written atomically).
    std::atomic<bool> stop{false};
    const cfr::StopSignals signals(stop, "cfr-run", "the latest checkpoint is intact");
    const bool learner = !dist || dist->learner();
    const int done = cfr::run_training(cfg, {.run_dir = run_dir,
                                             .resume = !resume.empty(),
                                             .allow_training_changes = allow_training_changes,
                                             .stop = &stop,
                                             .progress = learner && isatty(2) != 0,
                                             .dist = dist.get()});
    if (learner)
      std::cerr << fmt::format("cfr-run: {} iteration(s) completed{}; metrics in {}/metrics.jsonl\n", done,
                               dist ? fmt::format(" with {} traversal rank(s)", dist->size() - 1) : "", run_dir);
    return 0;
  } catch (const cfr::InputError& e) {
    return fail(fmt::format("cfr-run: error: {}", e.what()), cfr::kExitBadInput);
  } catch (const std::filesystem::filesystem_error& e) {  // a run directory that is a file, not writable, ...
    return fail(fmt::format("cfr-run: error: {}: {}", e.path1().string(), e.code().message()), cfr::kExitBadInput);
  } catch (const cfr::NumericError& e) {
    return fail(fmt::format("cfr-run: stopped: {}", e.what()), kExitNumericStop);
  } catch (const std::exception& e) {
    return fail(fmt::format("cfr-run: internal error: {}", e.what()), cfr::kExitInternal);
  }
}
