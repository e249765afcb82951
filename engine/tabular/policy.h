#pragma once
// Tabular policies over a GameTree, and policy files (docs/policy-files.md):
//   {"game": "kuhn" | "leduc", "policy": {KEY: [probability per action id], ...}}
// Kuhn rows are [pass, bet]; Leduc rows are [fold, call, raise] with 0 for illegal actions.
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/tabular/game_tree.h"

namespace cfr {

class ReservoirMemory;

class TabularPolicy {
 public:
  explicit TabularPolicy(const GameTree& tree) : tree_(&tree), probs_(tree.table_size(), 0.0) {}

  static TabularPolicy uniform(const GameTree& tree);
  static TabularPolicy first_legal(const GameTree& tree);

  const GameTree& tree() const noexcept { return *tree_; }
  std::span<double> row(int infoset) noexcept {
    return {probs_.data() + static_cast<std::size_t>(infoset) * tree_->num_distinct_actions(),
            static_cast<std::size_t>(tree_->num_distinct_actions())};
  }
  std::span<const double> row(int infoset) const noexcept {
    return {probs_.data() + static_cast<std::size_t>(infoset) * tree_->num_distinct_actions(),
            static_cast<std::size_t>(tree_->num_distinct_actions())};
  }
  double prob(int infoset, int action) const noexcept {
    return probs_[static_cast<std::size_t>(infoset) * tree_->num_distinct_actions() + action];
  }

  /// Throws InputError naming the first information set whose row has a negative or non-finite
  /// entry, gives mass to an illegal action, or does not sum to 1 within 1e-6. `where` prefixes
  /// the message (e.g. a file name).
  void validate(const std::string& where = "policy") const;

 private:
  const GameTree* tree_;
  std::vector<double> probs_;
};

/// Per information set of `tree`, the sum of a memory's sample targets (num_distinct_actions per
/// row, row-major), each weighted by its iteration if `linear`, else 1. Samples are matched by
/// their exact encoding (others are ignored); information sets that share an encoding share the
/// sums. What a perfect fit of a network trained on the memory would output, up to a positive
/// factor per row. With `weights`, also each information set's total sample weight (the sums
/// over it are the mean a fit would output).
std::vector<double> sample_sums(const GameTree& tree, const ReservoirMemory& memory, bool linear,
                                std::vector<double>* weights = nullptr);

/// The average of a strategy memory's samples on every information set of `tree` (samples are
/// matched to information sets by their exact encoding; others are ignored), weighted by the
/// sample's iteration if `linear` (as Deep CFR's strategy loss weighs them), else equally:
/// what a perfect fit of the strategy network would play. Uniform where no sample falls.
TabularPolicy sample_average_policy(const GameTree& tree, const ReservoirMemory& memory, bool linear);

/// Reads a policy file: its game name and rows. Throws InputError naming the file and what is
/// wrong (not JSON, a missing or unknown field, a row that is not a list of numbers).
struct PolicyFile {
  std::string game;
  std::vector<std::pair<std::string, std::vector<double>>> rows;
};
PolicyFile read_policy_file(const std::string& path);
/// The same from a file's text; `where` names it in errors.
PolicyFile parse_policy_file(std::string_view text, const std::string& where);

/// The policy of a file's rows on `tree`: every information set must be defined, every key must
/// exist, every row must have num_distinct_actions entries and be a valid distribution
/// (validate). Throws InputError naming the key.
TabularPolicy policy_from_rows(const GameTree& tree, const PolicyFile& file, const std::string& where);

/// Writes a policy file atomically (temporary file, then rename).
void write_policy_file(const std::string& path, const TabularPolicy& policy);

}  // namespace cfr
