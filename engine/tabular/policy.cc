#include "engine/tabular/policy.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "engine/core/errors.h"
#include "engine/core/files.h"
#include "engine/memory/reservoir.h"

namespace cfr {

TabularPolicy TabularPolicy::uniform(const GameTree& tree) {
  TabularPolicy p(tree);
  for (int i = 0; i < tree.num_infosets(); ++i) {
    const ActionMask legal = tree.infoset(i).legal;
    for (ActionMask m = legal; m != 0; m &= m - 1)
      p.row(i)[static_cast<std::size_t>(std::countr_zero(m))] = 1.0 / mask_count(legal);
  }
  return p;
}

TabularPolicy TabularPolicy::first_legal(const GameTree& tree) {
  TabularPolicy p(tree);
  for (int i = 0; i < tree.num_infosets(); ++i) p.row(i)[static_cast<std::size_t>(std::countr_zero(tree.infoset(i).legal))] = 1.0;
  return p;
}

void TabularPolicy::validate(const std::string& where) const {
  for (int i = 0; i < tree_->num_infosets(); ++i) {
    const auto& info = tree_->infoset(i);
    const auto r = row(i);
    double sum = 0;
    for (int a = 0; a < tree_->num_distinct_actions(); ++a) {
      const double x = r[static_cast<std::size_t>(a)];
      if (!std::isfinite(x) || x < 0)
        throw InputError(fmt::format("{}: information set '{}': probability of action {} is {}", where, info.key, a, x));
      if (x > 0 && !mask_has(info.legal, a))
        throw InputError(
            fmt::format("{}: information set '{}': action {} is illegal but has probability {}", where, info.key, a, x));
      sum += x;
    }
    if (std::abs(sum - 1.0) > 1e-6)
      throw InputError(fmt::format("{}: information set '{}': probabilities sum to {:.9g}, not 1", where, info.key, sum));
  }
}

PolicyFile read_policy_file(const std::string& path) { return parse_policy_file(read_text_file(path), path); }

PolicyFile parse_policy_file(std::string_view text, const std::string& path) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(fmt::format("{}: invalid JSON: {}", path, e.what()));
  }
  if (!j.is_object()) throw InputError(fmt::format("{}: a policy file is a JSON object", path));
  for (const auto& [k, v] : j.items())
    if (k != "game" && k != "policy")
      throw InputError(fmt::format("{}: unknown field '{}' (expected 'game' and 'policy')", path, k));
  if (!j.contains("game") || !j["game"].is_string())
    throw InputError(fmt::format("{}: field 'game' (a string) is missing", path));
  if (!j.contains("policy") || !j["policy"].is_object())
    throw InputError(fmt::format("{}: field 'policy' (an object of rows) is missing", path));
  PolicyFile f;
  f.game = j["game"].get<std::string>();
  for (const auto& [key, row] : j["policy"].items()) {
    if (!row.is_array()) throw InputError(fmt::format("{}: policy['{}'] must be a list of probabilities", path, key));
    std::vector<double> v;
    for (const auto& x : row) {
      if (!x.is_number()) throw InputError(fmt::format("{}: policy['{}'] holds a non-number {}", path, key, x.dump()));
      v.push_back(x.get<double>());
    }
    f.rows.emplace_back(key, std::move(v));
  }
  return f;
}

TabularPolicy policy_from_rows(const GameTree& tree, const PolicyFile& file, const std::string& where) {
  if (file.game != tree.game())
    throw InputError(fmt::format("{}: policy is for game '{}', not '{}'", where, file.game, tree.game()));
  TabularPolicy p(tree);
  std::vector<bool> seen(static_cast<std::size_t>(tree.num_infosets()), false);
  for (const auto& [key, row] : file.rows) {
    const int i = tree.find_infoset(key);
    if (i < 0) throw InputError(fmt::format("{}: '{}' is not an information set of {}", where, key, tree.game()));
    if (static_cast<int>(row.size()) != tree.num_distinct_actions())
      throw InputError(fmt::format("{}: policy['{}'] has {} entries; {} needs {} (one per action id)", where, key, row.size(),
                                   tree.game(), tree.num_distinct_actions()));
    std::copy(row.begin(), row.end(), p.row(i).begin());
    seen[static_cast<std::size_t>(i)] = true;
  }
  int missing = 0;
  std::string first;
  for (int i = 0; i < tree.num_infosets(); ++i)
    if (!seen[static_cast<std::size_t>(i)] && missing++ == 0) first = tree.infoset(i).key;
  if (missing > 0) throw InputError(fmt::format("{}: {} information set(s) undefined, e.g. '{}'", where, missing, first));
  p.validate(where);
  return p;
}

void write_policy_file(const std::string& path, const TabularPolicy& policy) {
  // One row per line, keys in the tree's discovery order, 17 significant digits (round-trips).
  const GameTree& t = policy.tree();
  std::string text = fmt::format("{{\"game\": {}, \"policy\": {{\n", nlohmann::json(t.game()).dump());
  for (int i = 0; i < t.num_infosets(); ++i) {
    const auto r = policy.row(i);
    text += fmt::format("  {}: [", nlohmann::json(t.infoset(i).key).dump());
    for (std::size_t a = 0; a < r.size(); ++a) text += fmt::format("{}{:.17g}", a ? ", " : "", r[a]);
    text += i + 1 < t.num_infosets() ? "],\n" : "]\n";
  }
  text += "}}\n";
  write_file_atomic(path, text);
}

std::vector<double> sample_sums(const GameTree& tree, const ReservoirMemory& memory, bool linear, std::vector<double>* weights) {
  const int A = tree.num_distinct_actions(), n = tree.num_infosets();
  CFR_CHECK(memory.input_width() == tree.encoding_width() && memory.target_width() == A,
            "memory of {} → {} for a tree of {} → {}", memory.input_width(), memory.target_width(), tree.encoding_width(), A);
  // The memory merged per input; information sets that share an encoding (a game may encode an
  // abstraction, e.g. Leduc's ranks) read the same row.
  MergedSamples merged;
  merged.rebuild(memory, linear);
  std::vector<double> sums(static_cast<std::size_t>(n) * static_cast<std::size_t>(A), 0.0);
  if (weights) weights->assign(static_cast<std::size_t>(n), 0.0);
  for (int i = 0; i < n; ++i) {
    const std::int64_t r = merged.find(tree.infoset_encoding(i));
    if (r < 0) continue;
    for (int a = 0; a < A; ++a) sums[static_cast<std::size_t>(i * A + a)] = merged.mean_target(r, a) * merged.weight(r);
    if (weights) (*weights)[static_cast<std::size_t>(i)] = merged.weight(r);
  }
  return sums;
}

TabularPolicy sample_average_policy(const GameTree& tree, const ReservoirMemory& memory, bool linear) {
  const int A = tree.num_distinct_actions(), n = tree.num_infosets();
  const std::vector<double> sums = sample_sums(tree, memory, linear);
  TabularPolicy pol(tree);
  for (int i = 0; i < n; ++i) {
    const ActionMask legal = tree.infoset(i).legal;
    const double* row = sums.data() + static_cast<std::size_t>(i) * static_cast<std::size_t>(A);
    double total = 0;
    for (ActionMask m = legal; m != 0; m &= m - 1) total += row[std::countr_zero(m)];
    const int legal_count = mask_count(legal);
    for (ActionMask m = legal; m != 0; m &= m - 1) {
      const int a = std::countr_zero(m);
      pol.row(i)[static_cast<std::size_t>(a)] = total > 0 ? row[a] / total : 1.0 / legal_count;
    }
  }
  return pol;
}

}  // namespace cfr
