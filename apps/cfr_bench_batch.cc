// cfr-bench-batch: forward (and optionally training-step) time of the configured network by batch
// size and precision (network.precision: fp32, bf16), on CPU or CUDA, to choose a precision, batch
// sizes and scheduler windows (KataGo's benchmark is the model). Warm-up, repeats taken in
// alternation between the precisions (this machine is shared: a ratio is measured in one run),
// median and spread; a table per precision and their ratios on stdout, CSV or JSON on request,
// and a recommendation for this machine.
//   cfr-bench-batch [CONFIG] [--device cpu|cuda] [--batches 1,4,16,64,256,1024,4096] [--train]
//                   [--precisions fp32,bf16] [--repeats 7] [--min-ms 50] [--threads 1]
//                   [--csv FILE] [--json FILE]

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>
#include <numeric>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "apps/cli.h"
#include "apps/run/config.h"
#include "apps/train/driver.h"
#include "engine/core/errors.h"
#include "engine/core/files.h"
#include "engine/core/resources.h"
#include "engine/memory/reservoir.h"
#include "nets/networks.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Timing {
  double median_us = 0, min_us = 0, max_us = 0;  // per call
};

/// A timing doubles its calls until they take min_ms, up to this many.
constexpr int kMaxCallsPerTiming = 1 << 20;

/// Times each of `calls` (one batch each): warm-up, then `repeats` runs of k calls each, k chosen
/// per call so that a run lasts at least min_ms, the runs of the different calls taken in turn
/// (call 0, call 1, call 0, ...) so that their ratios see the same load; per-call microseconds.
std::vector<Timing> time_alternating(const std::vector<std::function<void()>>& calls, int repeats, double min_ms) {
  std::vector<int> k(calls.size(), 1);
  for (std::size_t c = 0; c < calls.size(); ++c) {
    for (int i = 0; i < 3; ++i) calls[c]();
    for (;;) {
      const auto t = Clock::now();
      for (int i = 0; i < k[c]; ++i) calls[c]();
      const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t).count();
      if (ms >= min_ms || k[c] >= kMaxCallsPerTiming) break;
      k[c] = std::max(k[c] * 2, static_cast<int>(k[c] * min_ms / std::max(ms, 1e-3)));
    }
  }
  std::vector<std::vector<double>> us(calls.size());
  for (int r = 0; r < repeats; ++r)
    for (std::size_t c = 0; c < calls.size(); ++c) {
      const auto t = Clock::now();
      for (int i = 0; i < k[c]; ++i) calls[c]();
      us[c].push_back(std::chrono::duration<double, std::micro>(Clock::now() - t).count() / k[c]);
    }
  std::vector<Timing> out;
  for (auto& u : us) {
    std::sort(u.begin(), u.end());
    out.push_back({u[u.size() / 2], u.front(), u.back()});
  }
  return out;
}

/// Which OpenBLAS kernels fp32 products run on, when OpenBLAS is LibTorch's BLAS, with advice
/// when they are its generic x86-64 ones on a CPU whose AVX-512 or AVX2 kernels it has (main()
/// selects those itself, select_blas_kernels; the generic ones remain when the user set
/// OPENBLAS_CORETYPE to them).
std::string openblas_note() {
  const std::string core = cfr::blas_core();
  if (core.empty()) return "";
  std::string note = fmt::format("fp32 matrix products: OpenBLAS, {} kernels", core);
  if (core == "Prescott" || core == "prescott") {
    const std::string better = cfr::blas_core_for_cpu();
    if (!better.empty())
      note += fmt::format(
          " (generic: this OpenBLAS does not know the CPU; OPENBLAS_CORETYPE={} in the environment gives fp32 its {} kernels)",
          better, better == "SkylakeX" ? "AVX-512" : "AVX2");
  }
  return note;
}

/// --precisions: a comma-separated list of fp32, bf16 and auto (resolved on `device`), each once.
std::vector<std::string> parse_precisions(const std::string& text, const std::string& device) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, end - start);
    if (item != "fp32" && item != "bf16" && item != "auto")
      throw cfr::InputError(fmt::format("--precisions: '{}' is not a precision; valid: fp32, bf16, auto", item));
    const std::string name = cfr::resolve_precision(item, device).name;
    if (std::find(out.begin(), out.end(), name) != out.end())
      throw cfr::InputError(fmt::format("--precisions: {} is listed twice ('{}' is {})", name, item, name));
    out.push_back(name);
    start = end + 1;
  }
  return out;
}

std::vector<int> parse_batches(const std::string& text) {
  std::vector<int> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, end - start);
    try {
      std::size_t used = 0;
      const int b = std::stoi(item, &used);
      if (used != item.size() || b < 1 || b > cfr::kMaxEvaluatorBatch) throw std::invalid_argument(item);
      out.push_back(b);
    } catch (const std::exception&) {
      throw cfr::InputError(fmt::format("--batches: '{}' is not a batch size between 1 and 1048576", item));
    }
    start = end + 1;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  cfr::select_blas_kernels(argv);  // before any thread: OpenBLAS's kernels for this CPU (engine/core/resources.h)
  CLI::App app{"cfr-bench-batch: network forward / training-step time by batch size"};
  std::string config_path, device, batches_text = "1,4,16,64,256,1024,4096", csv_path, json_path, precisions_text;
  std::vector<std::string> sets;
  int repeats = 7, threads = 1;
  double min_ms = 50;
  bool train = false;
  app.add_option("CONFIG", config_path,
                 "config whose [network] and game are measured (default: the built-in default, "
                 "configs/default.toml's 3×512 Lost Cities nets)")
      ->check(cfr::kNonEmpty);
  app.add_option("--set", sets, "override one config key: section.key=value (repeatable)");
  app.add_option("--device", device, "cpu or cuda (default: the config's run.device)")->check(cfr::kNonEmpty);
  app.add_option("--batches", batches_text, "comma-separated batch sizes");
  app.add_flag("--train", train, "also time one training step (advantage net: sample, forward, backward, AdamW)");
  app.add_option("--precisions", precisions_text,
                 "comma-separated network precisions to measure in alternation (fp32, bf16, auto); default fp32 and, where "
                 "network.precision = auto would choose it, bf16")
      ->check(cfr::kNonEmpty);
  app.add_option("--repeats", repeats, "timed repeats per batch size (median and spread)")
      ->check(cfr::kDecimal)
      ->check(CLI::Range(1, 1000));
  app.add_option("--min-ms", min_ms, "minimum milliseconds per repeat")->check(cfr::finite_range(1.0, 60000.0));
  app.add_option("--threads", threads, "LibTorch threads")->check(cfr::kDecimal)->check(CLI::Range(1, 256));
  app.add_option("--csv", csv_path, "write the table as CSV")->check(cfr::kNonEmpty);
  app.add_option("--json", json_path, "write the results as JSON")->check(cfr::kNonEmpty);
  if (const auto rc = cfr::parse_command_line(app, "cfr-bench-batch", argc, argv)) return *rc;
  return cfr::run_app("cfr-bench-batch", [&] {
    // The defaults as a config file without keys gives them (every registered algorithm's section too).
    cfr::Config cfg = config_path.empty() ? cfr::parse_config("", "the built-in default") : cfr::load_config(config_path);
    for (const auto& s : sets) cfr::apply_override(cfg, s);
    if (!device.empty()) {
      if (device != "cpu" && device != "cuda") throw cfr::InputError(fmt::format("--device '{}': valid: cpu, cuda", device));
      cfg.run.device = device;
    }
    // Outputs are checked before minutes of measuring: their folder must exist.
    for (const auto& [flag, path] : {std::pair<const char*, const std::string&>{"--csv", csv_path}, {"--json", json_path}})
      if (!path.empty()) cfr::require_output_file(path, flag);
    cfr::validate(cfg);
    const std::vector<int> batches = parse_batches(batches_text);
    const cfr::PrecisionChoice bf16_here = cfr::resolve_precision("auto", cfg.run.device);
    const std::vector<std::string> precisions = parse_precisions(
        precisions_text.empty() ? (bf16_here.name == "bf16" ? "fp32,bf16" : "fp32") : precisions_text, cfg.run.device);
    cfr::configure_torch_threads(threads);
    const auto [W, A] = cfr::game_widths(cfg);
    // The selected algorithm's first network (Deep CFR's advantage net: the shape every traversal
    // query has), once per precision, with the same float32 weights (the same seed).
    std::vector<std::unique_ptr<cfr::NetworkSet>> sets;
    for (const auto& precision : precisions)
      sets.push_back(std::make_unique<cfr::NetworkSet>(cfr::find_algorithm(cfg.algorithm.name).networks(cfg, W, A),
                                                       cfr::NetworkConfig{.hidden_size = cfg.network.hidden_size,
                                                                          .num_layers = cfg.network.num_layers,
                                                                          .activation = cfg.network.activation,
                                                                          .device = cfg.run.device,
                                                                          .invariant_chunk = cfg.network.invariant_chunk,
                                                                          .precision = precision},
                                                       1));
    const int max_b = *std::max_element(batches.begin(), batches.end());
    std::vector<float> in(static_cast<std::size_t>(max_b) * W), out(static_cast<std::size_t>(max_b) * A);
    std::vector<cfr::ActionMask> legal(static_cast<std::size_t>(max_b),
                                       A >= 64 ? ~cfr::ActionMask{0} : (cfr::ActionMask{1} << A) - 1);
    cfr::Rng rng(7);
    for (auto& x : in) x = static_cast<float>(rng.below(1000)) / 1000.0F;
    std::unique_ptr<cfr::ReservoirMemory> mem;
    if (train) {  // random samples: the step's cost does not depend on their values
      // As wide as the network's samples (a policy-gradient sample holds 4·A + 1 floats), positive
      // for a policy-gradient loss (its behaviour and magnet probabilities), so no step is skipped.
      const cfr::NetworkSpec& spec = sets.front()->spec(0);
      const bool positive = spec.loss == cfr::NetLoss::kClippedPolicyGradient;
      mem = std::make_unique<cfr::ReservoirMemory>(max_b, W, spec.sample_target_width(), 3);
      std::vector<float> tgt(static_cast<std::size_t>(spec.sample_target_width()));
      for (int i = 0; i < max_b; ++i) {
        for (auto& t : tgt) t = static_cast<float>(rng.below(2000)) / 1000.0F - (positive ? 0.0F : 1.0F) + 1e-3F;
        mem->insert(in.data() + static_cast<std::size_t>(i) * W, tgt.data(), legal[0], 1);
      }
    }
    std::cout << fmt::format(
        "cfr-bench-batch: {}×{} {} MLP, {} → {} floats, {} parameters; device {}; {} torch thread(s); precisions {} "
        "(measured in alternation); median of {} repeats (≥ {} ms each)\n",
        cfg.network.num_layers, cfg.network.hidden_size, cfg.network.activation, W, A, sets.front()->parameters(0),
        cfg.run.device, threads, fmt::join(precisions, ", "), repeats, min_ms);
    if (const std::string note = openblas_note(); !note.empty()) std::cout << note << "\n";
    if (std::find(precisions.begin(), precisions.end(), "bf16") == precisions.end())
      std::cout << fmt::format("bf16 not measured: {} (--precisions fp32,bf16 measures it anyway)\n", bf16_here.why);
    struct Row {
      int batch;
      Timing fwd, step;
    };
    std::vector<std::vector<Row>> rows(precisions.size());  // per precision, per batch
    for (const int b : batches) {
      std::vector<std::function<void()>> forwards, steps;
      for (auto& nets : sets) {
        cfr::Evaluator& ev = nets->evaluator(0);
        forwards.emplace_back([&ev, &in, &legal, &out, b, W = W, A = A] {
          ev.evaluate({in.data(), static_cast<std::size_t>(b) * W}, {legal.data(), static_cast<std::size_t>(b)},
                      {out.data(), static_cast<std::size_t>(b) * A});
        });
        steps.emplace_back([n = nets.get(), &mem, b] {
          const cfr::TrainConfig tc{1, b, 1e-4, 1e-4, 1.0, true};
          cfr::Rng trng(5);
          n->train(0, *mem, 1, tc, trng);
        });
      }
      const auto fwd = time_alternating(forwards, repeats, min_ms);
      const auto step = train ? time_alternating(steps, repeats, min_ms) : std::vector<Timing>(precisions.size());
      for (std::size_t p = 0; p < precisions.size(); ++p) rows[p].push_back({b, fwd[p], step[p]});
    }
    // The precision: the fastest forward at the batch every precision does best at; with --train,
    // the fastest training step at the largest batch decides (training is most of an iteration).
    auto per_state = [](const Row& r) { return r.fwd.median_us / r.batch; };
    std::size_t best_p = 0;
    auto score = [&](std::size_t p) {
      if (train) return rows[p].back().step.median_us;
      double best = 1e300;
      for (const auto& r : rows[p]) best = std::min(best, per_state(r));
      return best;
    };
    for (std::size_t p = 1; p < precisions.size(); ++p)
      if (score(p) < score(best_p)) best_p = p;
    nlohmann::json js = {{"network",
                          {{"hidden_size", cfg.network.hidden_size},
                           {"num_layers", cfg.network.num_layers},
                           {"activation", cfg.network.activation},
                           {"input_width", W},
                           {"output_width", A}}},
                         {"device", cfg.run.device},
                         {"threads", threads},
                         {"repeats", repeats},
                         {"precisions", precisions},
                         {"recommended_precision", precisions[best_p]},
                         {"rows", nlohmann::json::array()},
                         {"rows_by_precision", nlohmann::json::object()}};
    std::string csv =
        "precision,batch,us_per_call,us_per_state,efficiency_vs_first,min_us_per_call,max_us_per_call,states_per_second";
    csv += train ? ",train_us_per_step,train_us_per_state\n" : "\n";
    for (std::size_t p = 0; p < precisions.size(); ++p) {
      const double base = per_state(rows[p].front());
      std::cout << fmt::format("\nprecision {}:\n", precisions[p]);
      std::cout << fmt::format("{:>7} {:>12} {:>12} {:>10} {:>16} {:>11}{}\n", "batch", "µs/call", "µs/state", "vs first",
                               "spread µs/call", "states/s",
                               train ? fmt::format(" {:>14} {:>14}", "train µs/step", "train µs/state") : "");
      auto& jrows = js["rows_by_precision"][precisions[p]];
      jrows = nlohmann::json::array();
      for (const auto& r : rows[p]) {
        const double per = per_state(r), eff = base / per;
        std::cout << fmt::format("{:>7} {:>12.2f} {:>12.4f} {:>9.1f}× {:>7.1f}–{:<8.1f} {:>11.0f}{}\n", r.batch, r.fwd.median_us,
                                 per, eff, r.fwd.min_us, r.fwd.max_us, 1e6 / per,
                                 train ? fmt::format(" {:>14.1f} {:>14.3f}", r.step.median_us, r.step.median_us / r.batch) : "");
        csv += fmt::format("{},{},{:.4f},{:.6f},{:.4f},{:.4f},{:.4f},{:.1f}", precisions[p], r.batch, r.fwd.median_us, per, eff,
                           r.fwd.min_us, r.fwd.max_us, 1e6 / per);
        csv += train ? fmt::format(",{:.4f},{:.6f}\n", r.step.median_us, r.step.median_us / r.batch) : "\n";
        nlohmann::json row = {{"batch", r.batch},           {"us_per_call", r.fwd.median_us},  {"us_per_state", per},
                              {"efficiency_vs_first", eff}, {"min_us_per_call", r.fwd.min_us}, {"max_us_per_call", r.fwd.max_us}};
        if (train) row["train_us_per_step"] = r.step.median_us;
        jrows.push_back(row);
      }
    }
    js["rows"] = js["rows_by_precision"][precisions[best_p]];
    // Ratios to fp32, measured in the same run (> 1: faster than fp32).
    const auto fp32_at = std::find(precisions.begin(), precisions.end(), "fp32");
    if (precisions.size() > 1 && fp32_at != precisions.end()) {
      const auto f = static_cast<std::size_t>(fp32_at - precisions.begin());
      for (std::size_t p = 0; p < precisions.size(); ++p) {
        if (p == f) continue;
        std::cout << fmt::format("\n{} speed-up over fp32 (fp32 time / {} time):\n{:>7} {:>10}{}\n", precisions[p], precisions[p],
                                 "batch", "forward", train ? fmt::format(" {:>14}", "training step") : "");
        auto& jr = js["speedup_over_fp32"][precisions[p]];
        jr = nlohmann::json::array();
        for (std::size_t i = 0; i < batches.size(); ++i) {
          const Row &a = rows[f][i], &r = rows[p][i];
          const double fs = a.fwd.median_us / r.fwd.median_us;
          const double ts = train ? a.step.median_us / r.step.median_us : 0.0;
          std::cout << fmt::format("{:>7} {:>9.2f}×{}\n", r.batch, fs, train ? fmt::format(" {:>13.2f}×", ts) : "");
          nlohmann::json row = {{"batch", r.batch}, {"forward", fs}};
          if (train) row["train"] = ts;
          jr.push_back(row);
        }
      }
    }
    // Recommendation: the precision above, and in it the smallest batch within 10% of the best
    // per-state time (larger batches only add latency and need more live traversals to fill).
    const auto& chosen = rows[best_p];
    double best = 1e300;
    for (const auto& r : chosen) best = std::min(best, per_state(r));
    int rec = chosen.back().batch;
    for (const auto& r : chosen)
      if (per_state(r) <= 1.1 * best) {
        rec = r.batch;
        break;
      }
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    const std::string advice =
        cfg.run.device == "cuda"
            ? fmt::format(
                  "traversal.scheduler = \"pooled\" with [scheduler.pooled] threads = {}, max_batch = {}, window = {} "
                  "(all threads together: the inference thread merges their requests)",
                  cores, rec, static_cast<int>(cores) * std::max(64, 2 * rec / static_cast<int>(cores)))
            : fmt::format(
                  "traversal.scheduler = \"interleaved\" with [scheduler.interleaved] max_batch = {}, window = {} "
                  "(a window of live traversals ≥ the batch keeps forwards full)",
                  rec, std::max(16, rec));
    std::string precision_advice;
    if (precisions.size() > 1) {
      const std::string basis = train ? fmt::format("the fastest training step at batch {}", chosen.back().batch)
                                      : std::string("the fastest forward per state");
      precision_advice =
          fmt::format("network.precision = \"{}\" ({}{})", precisions[best_p], basis,
                      precisions[best_p] == "fp32" ? "" : "; it rounds to bfloat16: docs/benchmarks.md measures learning");
      std::cout << fmt::format("\nrecommended: {}\n", precision_advice);
      js["precision_recommendation"] = precision_advice;
    }
    std::cout << fmt::format(
        "recommended: batch {} ({:.4f} µs/state in {}, within 10% of the best {:.4f}); {}\n", rec,
        [&] {
          for (const auto& r : chosen)
            if (r.batch == rec) return per_state(r);
          return 0.0;
        }(),
        precisions[best_p], best, advice);
    js["recommended_batch"] = rec;
    js["recommendation"] = advice;
    if (!csv_path.empty()) cfr::write_file_atomic(csv_path, csv);
    if (!json_path.empty()) cfr::write_file_atomic(json_path, js.dump(1) + "\n");
    return 0;
  });
}
