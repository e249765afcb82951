#include "apps/checkpoint_format.h"

#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "engine/errors.h"
#include "engine/reservoir.h"

namespace cfr {

namespace fs = std::filesystem;

std::string checkpoint_meta_json(const Config& cfg, int iteration, int input_width, int output_width,
                                 const Rng::StateWords& st) {
  const nlohmann::json meta = {{"format", "cfr-deep-cfr-checkpoint"},
                               {"version", kCheckpointVersion},
                               {"game", cfg.run.game},
                               {"iteration", iteration},
                               {"input_width", input_width},
                               {"output_width", output_width},
                               {"network", {{"hidden_size", cfg.network.hidden_size},
                                            {"num_layers", cfg.network.num_layers},
                                            {"activation", cfg.network.activation}}},
                               {"train_rng", {st.w[0], st.w[1], st.w[2], st.w[3]}},
                               {"memories", cfg.checkpoint.include_memories}};
  return meta.dump(1) + "\n";
}

CheckpointMeta parse_checkpoint_meta(const std::string& text, const std::string& where, const Config& cfg, int W,
                                     int A) {
  nlohmann::json meta;
  try {
    meta = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(fmt::format("{}: invalid JSON: {}", where, e.what()));
  }
  if (!meta.is_object()) throw InputError(fmt::format("{}: not a cfr-run checkpoint (not a JSON object)", where));
  auto need = [&](const char* key) -> const nlohmann::json& {
    if (!meta.contains(key)) throw InputError(fmt::format("{}: missing field '{}'", where, key));
    return meta[key];
  };
  if (need("format") != "cfr-deep-cfr-checkpoint") throw InputError(fmt::format("{}: not a cfr-run checkpoint", where));
  if (need("version") != kCheckpointVersion)
    throw InputError(fmt::format("{}: checkpoint format version {}; this cfr-run reads version {}", where,
                                 need("version").dump(), kCheckpointVersion));
  if (need("game") != cfg.run.game)
    throw InputError(fmt::format("{}: checkpoint of game {}, the config trains {}", where, need("game").dump(), cfg.run.game));
  if (need("input_width") != W || need("output_width") != A)
    throw InputError(fmt::format("{}: checkpoint networks map {} → {} floats, this config needs {} → {}", where,
                                 need("input_width").dump(), need("output_width").dump(), W, A));
  const auto& n = need("network");
  const bool same_net = n.is_object() && n.value("hidden_size", nlohmann::json()) == cfg.network.hidden_size &&
                        n.value("num_layers", nlohmann::json()) == cfg.network.num_layers &&
                        n.value("activation", nlohmann::json()) == cfg.network.activation;
  if (!same_net)
    throw InputError(fmt::format("{}: checkpoint network {} differs from the config's {}×{} {}", where, n.dump(),
                                 cfg.network.num_layers, cfg.network.hidden_size, cfg.network.activation));
  CheckpointMeta out;
  const auto& it = need("iteration");
  if (!it.is_number_integer() || it.get<std::int64_t>() < 0 || it.get<std::int64_t>() > 100'000'000)
    throw InputError(fmt::format("{}: field 'iteration' = {} is not an iteration number", where, it.dump()));
  out.iteration = it.get<int>();
  const auto& rng = need("train_rng");
  if (!rng.is_array() || rng.size() != 4)
    throw InputError(fmt::format("{}: field 'train_rng' must be 4 unsigned 64-bit words", where));
  for (std::size_t i = 0; i < 4; ++i) {
    if (!rng[i].is_number_unsigned())
      throw InputError(fmt::format("{}: field 'train_rng' must be 4 unsigned 64-bit words", where));
    out.train_rng.w[i] = rng[i].get<std::uint64_t>();
  }
  if ((out.train_rng.w[0] | out.train_rng.w[1] | out.train_rng.w[2] | out.train_rng.w[3]) == 0)
    throw InputError(fmt::format("{}: field 'train_rng' is all zero (not an RNG state)", where));
  const auto& mem = need("memories");
  if (!mem.is_boolean()) throw InputError(fmt::format("{}: field 'memories' must be true or false", where));
  out.memories = mem.get<bool>();
  return out;
}

CheckpointMeta read_checkpoint_meta(const std::string& ck, const Config& cfg, int W, int A) {
  const std::string where = (fs::path(ck) / "meta.json").string();
  return parse_checkpoint_meta(read_text_file(where), where, cfg, W, A);
}

void read_checkpoint_memories(std::istream& in, const std::string& where, ReservoirMemory& adv0, ReservoirMemory& adv1,
                              ReservoirMemory& strategy) {
  try {
    adv0.load(in, where + " (advantage memory 0)");
    adv1.load(in, where + " (advantage memory 1)");
    strategy.load(in, where + " (strategy memory)");
    if (in.peek() != std::char_traits<char>::eof())
      throw InputError(fmt::format("{}: trailing bytes after the memories", where));
  } catch (...) {  // all or nothing
    adv0.clear();
    adv1.clear();
    strategy.clear();
    throw;
  }
}

std::string latest_checkpoint_dir(const std::string& run_dir) {
  const fs::path dir = fs::path(run_dir) / "checkpoints";
  std::ifstream latest(dir / "latest");
  std::string name;
  if (!(latest >> name)) throw InputError(fmt::format("{}: no checkpoint (missing or empty)", (dir / "latest").string()));
  if (name.rfind("iter-", 0) != 0 || name.find('/') != std::string::npos)
    throw InputError(fmt::format("{}: names '{}', not a checkpoint directory", (dir / "latest").string(), name));
  return (dir / name).string();
}

}  // namespace cfr
