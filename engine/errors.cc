#include "engine/errors.h"

namespace cfr {

void check_failed(const char* file, int line, const char* expr, const std::string& msg) {
  throw CheckError(fmt::format("{}:{}: check failed: {}: {}", file, line, expr, msg));
}

}  // namespace cfr
