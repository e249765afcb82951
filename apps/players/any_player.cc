// make_any_player (declared in apps/players/checkpoint_policy.h, where the programs find it): every kind
// of player by name. Above both the checkpoint players and the search player, which is built on
// them, so that neither includes the other's header the other way round.
#include <string_view>

#include <fmt/format.h>

#include "apps/players/checkpoint_policy.h"
#include "apps/players/search_player.h"
#include "engine/core/errors.h"

namespace cfr {

AnyPlayer make_any_player(const std::string& name, const lc::Rules& rules, const lc::ExternalOptions& external) {
  static constexpr std::string_view kGreedy = "checkpoint:", kSampled = "checkpoint-sampled:", kSnapshots = "snapshots:",
                                    kSearch = "search:";
  AnyPlayer out;
  if (name.rfind(kSearch, 0) == 0) {
    out.batch = make_search_player(name.substr(kSearch.size()), rules);
    return out;
  }
  if (name.rfind(kSnapshots, 0) == 0) {
    out.batch = make_snapshot_player(name.substr(kSnapshots.size()), rules);
    return out;
  }
  const bool greedy = name.rfind(kGreedy, 0) == 0, sampled = name.rfind(kSampled, 0) == 0;
  if (greedy || sampled) {
    const PlayMode play = sampled ? PlayMode::kSampled : PlayMode::kGreedy;
    const CheckpointPolicy p = load_checkpoint_policy(name.substr((sampled ? kSampled : kGreedy).size()));
    if (p.config.run.game != "lost_cities")
      throw InputError(fmt::format("{}: a {} checkpoint cannot play Lost Cities", name, p.config.run.game));
    if (!(p.config.rules == rules))
      throw InputError(fmt::format("{}: the checkpoint was trained with other Lost Cities rules", name));
    out.batch = p.batch_bot(play, name);  // named as given: two checkpoints are told apart in reports
    return out;
  }
  return lc::make_player(name, rules, external);
}

}  // namespace cfr
