#include "python/players.h"

#include <array>
#include <exception>
#include <string_view>

#include <fmt/format.h>

#include "engine/core/errors.h"
#include "engine/core/rng.h"
#include "engine/games/external_player.h"
#ifdef CFR_PYTHON_TRAINED_PLAYERS
#include "apps/players/checkpoint_policy.h"
#endif

namespace cfr::py {

namespace {

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

/// The first line of an exception's message (LibTorch's c10::Error appends a backtrace).
std::string first_line(const char* what) {
  const std::string_view s(what);
  return std::string(s.substr(0, s.find('\n')));
}

}  // namespace

std::string SpecPlayer::name() const { return std::string(player.bot != nullptr ? player.bot->name() : player.batch->name()); }

bool trained_players_available() noexcept {
#ifdef CFR_PYTHON_TRAINED_PLAYERS
  return true;
#else
  return false;
#endif
}

std::shared_ptr<SpecPlayer> load_spec_player(const std::string& spec, const lc::Rules& rules) {
  auto out = std::make_shared<SpecPlayer>();
  out->spec = spec;
  out->rules = rules;
  try {
#ifdef CFR_PYTHON_TRAINED_PLAYERS
    out->player = make_any_player(spec, rules);  // cfr-arena's factory
#else
    for (std::string_view kind : {"checkpoint:", "checkpoint-sampled:", "snapshots:", "search:"})
      if (starts_with(spec, kind))
        throw InputError(
            fmt::format("player '{}': this cfr module was built without LibTorch (CFR_WITH_TORCH=OFF), so it has "
                        "no trained players; bots and external:COMMAND play",
                        spec));
    out->player = lc::make_player(spec, rules);
#endif
  } catch (const InputError& e) {
    if (std::string_view(e.what()).find(spec) != std::string_view::npos) throw;
    throw InputError(fmt::format("player '{}': {}", spec, e.what()));
  } catch (const std::exception& e) {  // LibTorch's errors on a file that is not a network's, ...
    throw InputError(fmt::format("player '{}': {}", spec, first_line(e.what())));
  }
  return out;
}

std::vector<int> choose_actions(SpecPlayer& p, std::span<const lc::State* const> states, std::span<const std::uint64_t> seeds,
                                std::span<const int> games) {
  if (starts_with(p.spec, lc::kExternalPrefix))
    throw InputError(
        fmt::format("player '{}': an external player moves only in matches and VectorEnv (it needs each "
                    "game's start, moves and end)",
                    p.spec));
  std::vector<int> actions(states.size(), 0);
  if (states.empty()) return actions;
  std::vector<Rng> rngs;
  rngs.reserve(states.size());
  for (const std::uint64_t s : seeds) rngs.emplace_back(s);
  std::lock_guard lock(p.mu);
  if (p.player.bot != nullptr) {
    for (std::size_t i = 0; i < states.size(); ++i) actions[i] = p.player.bot->choose_action(*states[i], rngs[i]);
    return actions;
  }
  std::vector<Rng*> rng_ptrs;
  for (Rng& r : rngs) rng_ptrs.push_back(&r);
  p.player.batch->choose_actions(states, rng_ptrs, games, actions);
  for (std::size_t i = 0; i < states.size(); ++i)
    if (actions[i] == lc::BatchBot::kForfeit)
      throw InputError(
          fmt::format("player '{}' forfeited game {}: {}", p.spec, games[i], p.player.batch->forfeit_cause(games[i])));
  return actions;
}

}  // namespace cfr::py
