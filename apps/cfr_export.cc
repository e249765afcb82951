// cfr-export: ships a trained agent. Writes the network that plays of a checkpoint (or a run's
// latest) alone as a checkpoint directory — config.toml, meta.json listing that one network,
// nets.pt without optimiser moments or memories — that `checkpoint:OUT` loads in cfr-eval,
// cfr-arena, cfr-ladder, the search player and cfr-serve, plus OUT/manifest.json: where it came
// from, its iteration, algorithm and size, merged with the fields of --manifest FILE (the command,
// revision, wall time and ladder results a shipping script records; docs/mmd.md). Exporting again
// into OUT replaces only those four files: a file the user added to OUT is never deleted.
// --average N writes instead the mean of the playing network's weights over the run's N newest
// checkpoints (a checkpoint weight average; manifest.json lists their iterations).
// --value-from CHECKPOINT|RUN_DIR adds that MMD checkpoint's value network, so that the search
// player's value leaves (search:OUT?depth=D) work over the model (manifest.json's value_network
// says where it came from and whether it was fitted to this very policy).
//   cfr-export CHECKPOINT|RUN_DIR OUT_DIR [--manifest FILE.json] [--average N] [--value-from CHECKPOINT|RUN_DIR]
#include <filesystem>
#include <iostream>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "apps/cli.h"
#include "apps/players/checkpoint_policy.h"
#include "engine/core/errors.h"
#include "engine/core/files.h"
#include "engine/core/resources.h"

int main(int argc, char** argv) {
  cfr::select_blas_kernels(argv);  // before any thread: OpenBLAS's kernels for this CPU (engine/core/resources.h)
  CLI::App app{"cfr-export: write the network that plays of a checkpoint (and optionally a value network), as a shipped model"};
  std::string from, out, manifest, value_from;
  int average = 1;
  app.add_option("CHECKPOINT", from, "checkpoint directory, or a run directory (its latest checkpoint)")
      ->required()
      ->check(cfr::kNonEmpty);
  app.add_option("OUT_DIR", out,
                 "the model's directory: created, or an earlier export whose config.toml, meta.json, nets.pt and "
                 "manifest.json are replaced (each atomically); any other file in it is kept")
      ->required()
      ->check(cfr::kNonEmpty);
  app.add_option("--manifest", manifest, "a JSON object whose fields are added to OUT_DIR/manifest.json")->check(cfr::kNonEmpty);
  app.add_option("--average", average,
                 "the mean of the playing network's weights over the N newest checkpoints of RUN_DIR (its latest and "
                 "the N - 1 before it) instead of the latest's alone")
      ->check(CLI::Range(1, 100'000));
  app.add_option("--value-from", value_from,
                 "an MMD checkpoint or run directory whose value network the model holds too (same game, rules, "
                 "encoding, shape and mmd.reward_scale; mmd.value_input = 'info'), for the search player's value leaves")
      ->check(cfr::kNonEmpty);
  if (const auto rc = cfr::parse_command_line(app, "cfr-export", argc, argv)) return *rc;
  return cfr::run_app("cfr-export", [&] {
    namespace fs = std::filesystem;
    nlohmann::json extra = nlohmann::json::object();
    if (!manifest.empty()) {  // read and checked before anything is written
      extra = nlohmann::json::parse(cfr::read_text_file(manifest), nullptr, /*allow_exceptions=*/false);
      if (!extra.is_object()) throw cfr::InputError(fmt::format("--manifest {}: not a JSON object", manifest));
    }
    const cfr::ExportedPolicy e = cfr::export_policy(from, out, average, value_from);
    nlohmann::json m = extra;  // the computed fields below win over --manifest's
    m.update(nlohmann::json{{"exported_from", from},
                            {"iteration", e.iteration},
                            {"algorithm", e.algorithm},
                            {"network", e.network},
                            {"parameters", e.parameters},
                            {"nets_pt_bytes", fs::file_size(fs::path(out) / "nets.pt")}});
    if (!e.averaged_iterations.empty()) m["averaged_iterations"] = e.averaged_iterations;
    // Without a value network, what --manifest copied from an earlier export about one (where it
    // came from, how it was fitted, the search over it) is no longer true.
    if (e.value_from.empty())
      for (const char* stale : {"value_network", "value_network_fit", "search"}) m.erase(stale);
    else
      m["value_network"] = {
          {"from", e.value_from}, {"iteration", e.value_iteration}, {"fitted_to_this_policy", e.value_fitted_to_policy}};
    cfr::write_file_atomic((fs::path(out) / "manifest.json").string(), m.dump(2) + "\n");
    const std::string averaged = e.averaged_iterations.empty()
                                     ? std::string()
                                     : fmt::format(", averaged over {} checkpoints from iteration {}",
                                                   e.averaged_iterations.size(), e.averaged_iterations.front());
    const std::string value =
        e.value_from.empty()
            ? std::string()
            : fmt::format(", with the value network of {} (iteration {}{})", e.value_from, e.value_iteration,
                          e.value_fitted_to_policy ? ", fitted to this policy" : ", trained beside another policy");
    std::cout << fmt::format("cfr-export: {} (iteration {}{}, {}'s {} network, {} parameters{}, {} bytes) → {}\n", from,
                             e.iteration, averaged, e.algorithm, e.network, e.parameters, value,
                             m["nets_pt_bytes"].get<std::uint64_t>(), out);
    return 0;
  });
}
