#pragma once
// The opponents cfr-serve offers (GET /api/players): fixed when it starts (the built-in bots, the
// shipped models, the --opponent extras of its command line) plus each Lost Cities run with a
// checkpoint under --runs, by run name. A request names an entry's id and nothing else: no
// request can name a program or a path.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "apps/serve/play.h"
#include "apps/serve/runs.h"

namespace cfr::serve {

class Catalog {
 public:
  /// `fixed`: every offer known at start, in the order the page lists them.
  Catalog(std::vector<Offer> fixed, const RunIndex& runs) : fixed_(std::move(fixed)), runs_(runs) {}
  /// Every offer now (the runs' checkpoints as they appear): [{id, label, kind, network}].
  nlohmann::json list() const;
  /// The offer named `id`, or ApiError 422 naming it.
  Offer resolve(const std::string& id) const;
  /// The offer whose id or spec is `name` (the command line's --default-opponent), if any.
  const Offer* find_fixed(const std::string& name) const;

 private:
  std::vector<Offer> all() const;
  std::vector<Offer> fixed_;
  const RunIndex& runs_;
};

}  // namespace cfr::serve
