#include "engine/core/json_input.h"

#include <climits>
#include <cstdint>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "engine/core/errors.h"

namespace cfr {

using nlohmann::json;

json parse_json_input(std::string_view text, std::string_view where) {
  // The callback sees each array or object open at the depth of its parent (the top level's at 0)
  // and can stop the parse by throwing: the parser's own stack of open containers stays bounded.
  const json::parser_callback_t bounded = [where](int depth, json::parse_event_t event, json&) {
    if ((event == json::parse_event_t::array_start || event == json::parse_event_t::object_start) && depth >= kMaxJsonDepth)
      throw InputError(fmt::format("{}: JSON nested deeper than {} levels (arrays and objects inside one another); refused",
                                   where, kMaxJsonDepth));
    return true;
  };
  try {
    return json::parse(text, bounded);
  } catch (const json::exception& e) {
    throw InputError(fmt::format("{}: invalid JSON: {}", where, e.what()));
  }
}

std::string json_brief(const json& v) {
  if (v.is_array()) return fmt::format("an array of {} value{}", v.size(), v.size() == 1 ? "" : "s");
  if (v.is_object()) return fmt::format("an object of {} field{}", v.size(), v.size() == 1 ? "" : "s");
  constexpr std::size_t kMax = 40;
  std::string s = v.dump(-1, ' ', false, json::error_handler_t::replace);  // a scalar: no recursion
  if (s.size() > kMax) {
    std::size_t cut = kMax;
    while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;  // not inside a UTF-8 letter
    s = s.substr(0, cut) + "…";
  }
  return s;
}

int json_int(const json& v, std::string_view field, std::string_view where) {
  if (!v.is_number_integer()) throw InputError(fmt::format("{}: {} must be an integer, got {}", where, field, json_brief(v)));
  const bool fits = v.is_number_unsigned() ? v.get<std::uint64_t>() <= static_cast<std::uint64_t>(INT_MAX)
                                           : v.get<std::int64_t>() >= INT_MIN && v.get<std::int64_t>() <= INT_MAX;
  if (!fits) throw InputError(fmt::format("{}: {} = {} is out of range (a 32-bit integer)", where, field, json_brief(v)));
  return v.get<int>();
}

}  // namespace cfr
