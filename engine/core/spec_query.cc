#include "engine/core/spec_query.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "engine/core/errors.h"

namespace cfr {

std::vector<QueryPair> split_spec_query(std::string_view query, std::string_view what, std::string_view keys) {
  if (query.empty()) throw InputError(fmt::format("{}: no key=value after the '?' (keys: {})", what, keys));
  if (query.size() > kMaxSpecQuery)
    throw InputError(fmt::format("{}: the spec is {} characters (at most {})", what, query.size(), kMaxSpecQuery));
  std::vector<QueryPair> out;
  while (!query.empty()) {
    const std::size_t amp = query.find('&');
    const std::string_view kv = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
    const std::size_t eq = kv.find('=');
    if (eq == std::string_view::npos) throw InputError(fmt::format("{}: '{}': want key=value (keys: {})", what, kv, keys));
    const QueryPair p{kv.substr(0, eq), kv.substr(eq + 1)};
    if (std::any_of(out.begin(), out.end(), [&](const QueryPair& q) { return q.key == p.key; }))
      throw InputError(fmt::format("{}: key '{}' given twice", what, p.key));
    out.push_back(p);
  }
  return out;
}

double spec_number(std::string_view what, const QueryPair& kv, double lo, double hi, bool integer) {
  const std::string s(kv.value);
  char* end = nullptr;
  const double v = s.empty() || s.size() > 32 ? std::nan("") : std::strtod(s.c_str(), &end);
  if (!std::isfinite(v) || *end != '\0' || v < lo || v > hi || (integer && v != std::floor(v)))
    throw InputError(
        fmt::format("{}: {}={}: must be {} in [{}, {}]", what, kv.key, kv.value, integer ? "an integer" : "a number", lo, hi));
  return v;
}

}  // namespace cfr
