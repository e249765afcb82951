#pragma once
// JSON text from outside (an upload, a file, a caller's string) read the one way every reader
// shares: parsed with a bound on its nesting, its integers read with a range check, and its values
// named in error messages without printing whole arrays or objects. nlohmann's dump() and its
// comparisons recurse once per nesting level, so a line of a million '[' (2 MB) would overflow a
// thread's stack where a message or a check printed it; refused at the parse instead.
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

namespace cfr {

/// Deepest nesting of arrays and objects parse_json_input accepts (a transcript line nests 2, a
/// serialized state 3).
inline constexpr int kMaxJsonDepth = 64;

/// Parses `text`. InputError "<where>: invalid JSON: ..." when it is not JSON, and "<where>: JSON
/// nested deeper than 64 levels ..." as soon as the parser meets a 65th level (before reading on).
nlohmann::json parse_json_input(std::string_view text, std::string_view where);

/// `v` for an error message, bounded: a number, true, false or null as JSON, a string as JSON cut
/// to 40 characters ("…" after), an array or object by its kind and size ("an array of 3 values").
std::string json_brief(const nlohmann::json& v);

/// An integer field's value as an int; InputError "<where>: <field> must be an integer, got ..."
/// or "... = V is out of range (a 32-bit integer)" (json's get<int> would keep the low bits:
/// 4294967296 + k read as k).
int json_int(const nlohmann::json& v, std::string_view field, std::string_view where);

}  // namespace cfr
