#include "engine/games/players.h"

namespace cfr::lc {

AnyPlayer make_player(const std::string& name, const Rules& rules, const ExternalOptions& external) {
  AnyPlayer out;
  if (name.rfind(kExternalPrefix, 0) == 0)
    out.batch = make_external_player(std::string_view(name).substr(kExternalPrefix.size()), rules, external);
  else
    out.bot = make_bot(name, rules);
  return out;
}

}  // namespace cfr::lc
