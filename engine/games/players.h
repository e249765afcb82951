#pragma once
// A side of a Lost Cities match by name, for every tool that takes one: a bot's name (bots.h) or
// external:COMMAND (external_player.h). apps/players/checkpoint_policy.h adds the trained players
// (checkpoint:PATH, checkpoint-sampled:PATH, snapshots:RUN_DIR).
#include <memory>
#include <string>

#include "engine/games/bots.h"
#include "engine/games/external_player.h"
#include "engine/games/match.h"

namespace cfr::lc {

struct AnyPlayer {
  std::unique_ptr<Bot> bot;
  std::unique_ptr<BatchBot> batch;
  MatchPlayer player() const { return {.bot = bot.get(), .batch = batch.get()}; }
};

/// A bot by name or external:COMMAND (started now, its hello exchanged). InputError naming the
/// valid names, or what is wrong with the command.
AnyPlayer make_player(const std::string& name, const Rules& rules, const ExternalOptions& external = {});

}  // namespace cfr::lc
