#include "apps/run/run_files.h"

#include <filesystem>
#include <sstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/core/errors.h"
#include "engine/core/files.h"

namespace cfr {

namespace fs = std::filesystem;

std::string checkpoint_dir_name(int iteration) { return fmt::format("iter-{:06d}", iteration); }

void trim_metrics(const std::string& path, int last) {
  const std::string text = fs::exists(path) ? read_text_file(path) : std::string();
  std::istringstream in(text);
  std::string line, kept;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception& e) {
      if (in.eof() && text.back() != '\n') break;  // the last line, cut off by a crash mid-append: dropped
      throw InputError(fmt::format("{}:{}: invalid JSON: {} (a resume drops only a torn last line; remove or repair this one)",
                                   path, lineno, e.what()));
    }
    if (!j.is_object() || (j.contains("iteration") && !j["iteration"].is_number_integer()))
      throw InputError(fmt::format("{}:{}: not a metrics line (a JSON object whose iteration is an integer)", path, lineno));
    if (j.value("iteration", 0) <= last) kept += line + "\n";
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
