#include "apps/run/checkpoint_format.h"

#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "engine/core/errors.h"
#include "engine/core/files.h"
#include "engine/memory/reservoir.h"

namespace cfr {

namespace fs = std::filesystem;

namespace {

constexpr const char* kChecksumField = "checksum";

/// The checksum that meta.json records of its other fields (their compact dump: keys sorted).
std::string meta_checksum(nlohmann::json meta) {
  meta.erase(kChecksumField);
  return checksum_of(meta.dump());
}

/// meta.json's field `key` (InputError naming `where` when it is missing).
const nlohmann::json& need_field(const nlohmann::json& meta, const char* key, const std::string& where) {
  if (!meta.contains(key)) throw InputError(fmt::format("{}: missing field '{}'", where, key));
  return meta[key];
}

/// meta.json's "networks": the set's names and widths, in order.
nlohmann::json network_list(const NetworkSpecs& nets) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& n : nets) list.push_back({{"name", n.name}, {"input_width", n.input_width}, {"output_width", n.output_width}});
  return list;
}

}  // namespace

std::vector<std::string> meta_network_names(const std::string& text) {
  const auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  std::vector<std::string> names;
  if (!j.is_object() || !j.contains("networks") || !j["networks"].is_array()) return names;
  for (const auto& n : j["networks"]) {
    if (!n.is_object() || !n.contains("name") || !n["name"].is_string()) return {};
    names.push_back(n["name"].get<std::string>());
  }
  return names;
}

namespace {

/// A file name recorded in meta.json: a plain name inside the checkpoint directory.
bool plain_file_name(const std::string& name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos &&
         name.find('\0') == std::string::npos;
}

}  // namespace

CheckpointShape checkpoint_shape(const Config& cfg) {
  return {.game = cfg.run.game,
          .hidden_size = cfg.network.hidden_size,
          .num_layers = cfg.network.num_layers,
          .activation = cfg.network.activation};
}

std::string checkpoint_meta_json(const CheckpointShape& shape, bool memories, int iteration, const NetworkSpecs& nets,
                                 const Rng::StateWords& st, const std::map<std::string, FileChecksum>& files) {
  nlohmann::json listed = nlohmann::json::object();
  for (const auto& [name, f] : files) listed[name] = {{"bytes", f.bytes}, {"xxh3_128", f.digest}};
  nlohmann::json meta = {
      {"format", "cfr-deep-cfr-checkpoint"},
      {"version", kCheckpointVersion},
      {"game", shape.game},
      {"iteration", iteration},
      {"networks", network_list(nets)},
      {"network", {{"hidden_size", shape.hidden_size}, {"num_layers", shape.num_layers}, {"activation", shape.activation}}},
      {"train_rng", {st.w[0], st.w[1], st.w[2], st.w[3]}},
      {"memories", memories},
      {"files", listed}};
  meta[kChecksumField] = meta_checksum(meta);
  return meta.dump(1) + "\n";
}

namespace {

/// Refuses a checkpoint of another game, network set or shape.
void check_matches(const nlohmann::json& meta, const std::string& where, const CheckpointShape& cfg, const NetworkSpecs& nets) {
  auto need = [&](const char* key) -> const nlohmann::json& { return need_field(meta, key, where); };
  if (need("game") != cfg.game)
    throw InputError(fmt::format("{}: checkpoint of game {}, the config trains {}", where, need("game").dump(), cfg.game));
  if (need("networks") != network_list(nets))
    throw InputError(fmt::format("{}: checkpoint networks {}, this config needs {}", where, need("networks").dump(),
                                 network_list(nets).dump()));
  const auto& n = need("network");
  const bool same_net = n.is_object() && n.value("hidden_size", nlohmann::json()) == cfg.hidden_size &&
                        n.value("num_layers", nlohmann::json()) == cfg.num_layers &&
                        n.value("activation", nlohmann::json()) == cfg.activation;
  if (!same_net)
    throw InputError(fmt::format("{}: checkpoint network {} differs from the config's {}×{} {}", where, n.dump(), cfg.num_layers,
                                 cfg.hidden_size, cfg.activation));
}

/// parse_checkpoint_meta; without a config (nullptr) nothing is compared with one.
CheckpointMeta parse_meta(const std::string& text, const std::string& where, const CheckpointShape* cfg,
                          const NetworkSpecs& nets) {
  nlohmann::json meta;
  try {
    meta = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(fmt::format("{}: invalid JSON: {}", where, e.what()));
  }
  if (!meta.is_object()) throw InputError(fmt::format("{}: not a cfr-run checkpoint (not a JSON object)", where));
  auto need = [&](const char* key) -> const nlohmann::json& { return need_field(meta, key, where); };
  if (need("format") != "cfr-deep-cfr-checkpoint") throw InputError(fmt::format("{}: not a cfr-run checkpoint", where));
  if (need("version") != kCheckpointVersion)
    throw InputError(fmt::format("{}: checkpoint format version {}; this cfr-run reads version {}", where, need("version").dump(),
                                 kCheckpointVersion));
  if (cfg != nullptr) check_matches(meta, where, *cfg, nets);
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
  const auto& files = need("files");
  if (!files.is_object()) throw InputError(fmt::format("{}: field 'files' must be an object", where));
  for (const auto& [name, f] : files.items()) {
    if (!plain_file_name(name))
      throw InputError(fmt::format("{}: field 'files' names '{}', not a file of the checkpoint directory", where, name));
    const bool ok = f.is_object() && f.size() == 2 && f.contains("bytes") && f["bytes"].is_number_unsigned() &&
                    f.contains("xxh3_128") && f["xxh3_128"].is_string() && f["xxh3_128"].get<std::string>().size() == 32;
    if (!ok)
      throw InputError(fmt::format("{}: field 'files.{}' must be {{\"bytes\": size, \"xxh3_128\": 32 hex digits}}", where, name));
    out.files[name] = {.bytes = f["bytes"].get<std::int64_t>(), .digest = f["xxh3_128"].get<std::string>()};
  }
  for (const char* name : {"nets.pt", "config.toml"})
    if (!out.files.contains(name)) throw InputError(fmt::format("{}: field 'files' does not list {}", where, name));
  if (out.memories != out.files.contains("memories.bin"))
    throw InputError(fmt::format("{}: field 'memories' is {} but 'files' {} memories.bin", where, out.memories,
                                 out.memories ? "does not list" : "lists"));
  // Last, so that a hand-edited field is reported as what differs (above) rather than as a bad checksum.
  const auto& sum = need(kChecksumField);
  if (!sum.is_string() || sum.get<std::string>() != meta_checksum(meta))
    throw InputError(
        fmt::format("{}: checksum mismatch: the file was changed after it was written (field '{}')", where, kChecksumField));
  return out;
}

}  // namespace

CheckpointMeta parse_checkpoint_meta(const std::string& text, const std::string& where, const CheckpointShape& cfg,
                                     const NetworkSpecs& nets) {
  return parse_meta(text, where, &cfg, nets);
}

void verify_checkpoint_files(const std::string& ck, const CheckpointMeta& meta) {
  for (const auto& [name, want] : meta.files) {
    const std::string path = (fs::path(ck) / name).string();
    const FileChecksum got = file_checksum(path);
    if (got.bytes != want.bytes)
      throw InputError(fmt::format("{}: {} bytes, meta.json records {} (truncated or changed after it was written)", path,
                                   got.bytes, want.bytes));
    if (got.digest != want.digest)
      throw InputError(
          fmt::format("{}: checksum mismatch (xxh3_128 {}, meta.json records {}): the file was changed "
                      "or corrupted after it was written",
                      path, got.digest, want.digest));
  }
}

namespace {

CheckpointMeta read_meta(const std::string& ck, const CheckpointShape* cfg, const NetworkSpecs& nets) {
  require_directory(ck, "checkpoint");
  const std::string where = (fs::path(ck) / "meta.json").string();
  CheckpointMeta meta = parse_meta(read_text_file(where), where, cfg, nets);
  verify_checkpoint_files(ck, meta);
  return meta;
}

}  // namespace

CheckpointMeta read_checkpoint_meta(const std::string& ck, const CheckpointShape& cfg, const NetworkSpecs& nets) {
  return read_meta(ck, &cfg, nets);
}

CheckpointMeta verify_checkpoint(const std::string& ck) { return read_meta(ck, nullptr, {}); }

void read_checkpoint_memories(std::istream& in, const std::string& where, ReservoirMemory& adv0, ReservoirMemory& adv1,
                              ReservoirMemory& strategy) {
  try {
    adv0.load(in, where + " (advantage memory 0)");
    adv1.load(in, where + " (advantage memory 1)");
    strategy.load(in, where + " (strategy memory)");
    if (in.peek() != std::char_traits<char>::eof()) throw InputError(fmt::format("{}: trailing bytes after the memories", where));
  } catch (...) {  // all or nothing
    adv0.clear();
    adv1.clear();
    strategy.clear();
    throw;
  }
}

std::string latest_checkpoint_dir(const std::string& run_dir) {
  const fs::path dir = fs::path(run_dir) / "checkpoints";
  if (!fs::exists(dir / "latest")) throw InputError(fmt::format("{}: no checkpoint (missing)", (dir / "latest").string()));
  require_readable_file((dir / "latest").string());
  std::ifstream latest(dir / "latest");
  std::string name;
  if (!(latest >> name)) throw InputError(fmt::format("{}: no checkpoint (missing or empty)", (dir / "latest").string()));
  if (name.rfind("iter-", 0) != 0 || !plain_file_name(name))
    throw InputError(fmt::format("{}: names '{}', not a checkpoint directory", (dir / "latest").string(), name));
  if (!fs::is_directory(dir / name))
    throw InputError(
        fmt::format("{}: names '{}', which is not a directory of {}", (dir / "latest").string(), name, dir.string()));
  return (dir / name).string();
}

}  // namespace cfr
