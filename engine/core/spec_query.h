#pragma once
// The query part of a player's spec ("NAME?key=value&key=value"): split, checked and read into
// numbers the same way for every player that takes one (heuristic_expert's variants, ismcts).
#include <string_view>
#include <vector>

namespace cfr {

struct QueryPair {
  std::string_view key;
  std::string_view value;
};

/// Longest query a spec may carry (characters).
inline constexpr std::size_t kMaxSpecQuery = 1000;

/// Splits "k=v&k=v" into its pairs. Throws InputError starting "`what`: " for an empty query, one
/// longer than kMaxSpecQuery, a pair without '=' or a key given twice (it would be played with its
/// last value under a name showing both); `keys` lists the valid keys for the messages.
std::vector<QueryPair> split_spec_query(std::string_view query, std::string_view what, std::string_view keys);

/// The pair's value as a finite number in [lo, hi] (an integer when `integer`); InputError
/// "`what`: key=value: must be a number in [lo, hi]" otherwise.
double spec_number(std::string_view what, const QueryPair& kv, double lo, double hi, bool integer = false);

}  // namespace cfr
