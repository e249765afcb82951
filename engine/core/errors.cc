#include "engine/core/errors.h"

#include <fstream>
#include <sstream>

#include "engine/core/files.h"

namespace cfr {

std::string read_text_file(const std::string& path) {
  require_readable_file(path);
  std::ifstream in(path);
  if (!in) throw InputError(fmt::format("{}: cannot open file", path));
  std::stringstream text;
  text << in.rdbuf();
  if (in.bad()) throw InputError(fmt::format("{}: read error", path));
  return text.str();
}

void check_failed(const char* file, int line, const char* expr, const std::string& msg) {
  throw CheckError(fmt::format("{}:{}: check failed: {}: {}", file, line, expr, msg));
}

}  // namespace cfr
