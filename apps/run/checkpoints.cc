#include "apps/run/checkpoints.h"

#include <filesystem>
#include <map>
#include <vector>

#include "apps/run/run_files.h"
#include "engine/core/checksum.h"
#include "engine/core/files.h"
#include "nets/networks.h"

namespace cfr {

namespace fs = std::filesystem;

void write_checkpoint_files(const NetworkSet& nets, const std::string& dir, const CheckpointWrite& w) {
  const fs::path d(dir);
  std::vector<std::string> names = {"nets.pt", "config.toml"};
  nets.save((d / "nets.pt").string());
  write_file_atomic((d / "config.toml").string(), w.config_toml);
  if (w.write_memories) {
    w.write_memories((d / "memories.bin").string());
    names.push_back("memories.bin");
  }
  for (const auto& [name, text] : w.extra_files) {
    write_file_atomic((d / name).string(), text);
    names.push_back(name);
  }
  std::map<std::string, FileChecksum> files;
  for (const auto& name : names) files[name] = file_checksum((d / name).string());
  write_file_atomic((d / "meta.json").string(), checkpoint_meta_json(w.shape, static_cast<bool>(w.write_memories), w.iteration,
                                                                     nets.specs(), w.train_rng, files));
}

void write_checkpoint_dir(const NetworkSet& nets, const CheckpointWrite& w) {
  const fs::path dir = fs::path(w.run_dir) / "checkpoints";
  fs::create_directories(dir);
  const fs::path tmp = dir / (".tmp-" + checkpoint_dir_name(w.iteration));
  fs::remove_all(tmp);
  fs::create_directories(tmp);
  try {
    write_checkpoint_files(nets, tmp.string(), w);
  } catch (...) {  // e.g. a full disk: the partial checkpoint goes (freeing its space); `latest` is untouched
    std::error_code ec;
    fs::remove_all(tmp, ec);
    throw;
  }
  const fs::path final_dir = dir / checkpoint_dir_name(w.iteration);
  fs::remove_all(final_dir);
  fs::rename(tmp, final_dir);
  write_file_atomic((dir / "latest").string(), checkpoint_dir_name(w.iteration) + "\n");
  const int previous = w.previous_latest;
  if (previous > 0 && previous != w.iteration && (w.save_every <= 0 || previous % w.save_every != 0))
    fs::remove_all(dir / checkpoint_dir_name(previous));
}

}  // namespace cfr
