#include "apps/serve/catalog.h"

#include <fmt/format.h>

namespace cfr::serve {

std::vector<Offer> Catalog::all() const {
  std::vector<Offer> out = fixed_;
  for (const auto& [name, path] : runs_.playable())
    out.push_back({.id = "run:" + name,
                   .label = "run " + name,
                   .kind = "run",
                   .spec = "checkpoint:" + path.string(),
                   .network = true,
                   .slow = false});
  return out;
}

nlohmann::json Catalog::list() const {
  nlohmann::json out = nlohmann::json::array();
  for (const Offer& o : all()) out.push_back({{"id", o.id}, {"label", o.label}, {"kind", o.kind}, {"network", o.network}});
  return out;
}

Offer Catalog::resolve(const std::string& id) const {
  for (Offer& o : all())
    if (o.id == id) return o;
  // The id is echoed only when it could be one (a request's own path or command is not repeated).
  const bool plain =
      id.size() <= 100 &&
      id.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_:.-") == std::string::npos;
  throw ApiError(422, plain ? fmt::format("no opponent '{}' is offered here (GET /api/players lists them)", id)
                            : std::string("no such opponent is offered here (GET /api/players lists them)"));
}

const Offer* Catalog::find_fixed(const std::string& name) const {
  for (const Offer& o : fixed_)
    if (o.id == name || o.spec == name) return &o;
  return nullptr;
}

}  // namespace cfr::serve
