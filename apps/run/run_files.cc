#include "apps/run/run_files.h"

#include <filesystem>
#include <fstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/core/files.h"

namespace cfr {

namespace fs = std::filesystem;

std::string checkpoint_dir_name(int iteration) { return fmt::format("iter-{:06d}", iteration); }

void trim_metrics(const std::string& path, int last) {
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
  write_file_atomic(path, kept);
}

int write_part_config(const std::string& run_dir, const std::string& config_toml, const std::string& header) {
  const fs::path parts = fs::path(run_dir) / "parts";
  fs::create_directories(parts);
  int n = 1;
  while (fs::exists(parts / fmt::format("part-{:03d}.toml", n))) ++n;
  std::string text;
  for (const auto& line : std::vector<std::string>{fmt::format("part {}", n), header}) text += "# " + line + "\n";
  write_file_atomic((parts / fmt::format("part-{:03d}.toml", n)).string(), text + config_toml);
  return n;
}

}  // namespace cfr
