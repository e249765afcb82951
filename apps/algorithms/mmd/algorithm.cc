// MMD's registration (apps/run/algorithm_registry.h): its [mmd] keys, checks, network set, memory and
// the bot its games need, and its typed options from a config. LibTorch-free.
#include <algorithm>

#include <fmt/format.h>

#include "apps/algorithms/mmd/networks.h"
#include "apps/algorithms/mmd/options.h"
#include "apps/run/algorithm_registry.h"
#include "apps/run/config.h"
#include "apps/run/options.h"
#include "engine/core/errors.h"
#include "engine/games/bots.h"
#include "engine/games/expert_bot.h"
#include "engine/games/games.h"
#include "engine/games/ismcts_bot.h"
#include "engine/memory/reservoir.h"

namespace cfr {

namespace {

MmdValueInput value_input(const AlgorithmSettings& m) {
  const std::string& v = m.text("value_input");
  return v == "full" ? MmdValueInput::kFull : v == "world" ? MmdValueInput::kWorld : MmdValueInput::kInfo;
}

/// The value network's input width (and a sample's) for a config whose game's input width is W.
int value_width(const Config& c, int W) {
  const MmdValueInput v = value_input(c.algorithm_options.at("mmd"));
  return mmd_sample_width(W, v, v == MmdValueInput::kWorld ? traversal_world_width(c.run.game, game_settings(c)) : 0);
}

}  // namespace

MmdOptions mmd_options(const Config& c) {
  const AlgorithmSettings& m = c.algorithm_options.at("mmd");
  const double bc_weight = m.real("bc_weight"), magnet_weight = m.real("magnet_weight");
  const bool search_teacher = m.text("teacher") != "bot";  // "search" or "lookahead"
  return {.rollouts_per_iteration = static_cast<int>(m.integer("rollouts_per_iteration")),
          .rollout = {.reward_scale = m.real("reward_scale"),
                      .gae_lambda = m.real("gae_lambda"),
                      .win_reward = m.real("win_reward"),
                      .bot_share = m.real("bot_share"),
                      .snapshot_share = m.real("snapshot_share"),
                      .opponent_share = m.real("opponent_share"),
                      .league = {},
                      .bc_targets = bc_weight > 0 && !search_teacher,
                      .teacher = nullptr,
                      .max_actions = static_cast<int>(m.integer("max_actions")),
                      .magnet = magnet_weight > 0,
                      .cutoff = cutoff_value(c),
                      .value_input = value_input(m),
                      .deviation = m.real("critic_deviation"),
                      .deviation_k = static_cast<int>(m.integer("critic_deviation_k"))},
          .epochs = static_cast<int>(m.integer("epochs")),
          .batch_size = static_cast<int>(m.integer("batch_size")),
          .terms = {.clip = m.real("clip"),
                    .magnet_weight = magnet_weight,
                    .bc_weight = bc_weight,
                    .entropy_weight = m.real("entropy_weight"),
                    .normalize_advantage = m.flag("normalize_advantages")},
          .magnet_every = static_cast<int>(m.integer("magnet_every")),
          .bc_weight = bc_weight,
          .bc_fade_iterations = static_cast<int>(m.integer("bc_fade_iterations")),
          .snapshot_every = static_cast<int>(m.integer("snapshot_every")),
          .snapshots_kept = static_cast<int>(m.integer("snapshots_kept")),
          .capacity = m.integer("capacity"),
          .bot = m.text("bot"),
          .teacher = m.text("teacher"),
          .search = {.share = search_teacher ? m.real("search_share") : 0.0,
                     .lookahead = m.text("teacher") == "lookahead",
                     .settings = {.top_k = static_cast<int>(m.integer("search_k")),
                                  .deals = static_cast<int>(m.integer("search_deals")),
                                  .depth = static_cast<int>(m.integer("search_depth")),
                                  .cap = static_cast<int>(m.integer("search_cap")),
                                  .prior = m.real("search_prior"),
                                  .sampled = true,
                                  .value_scale = m.real("reward_scale"),
                                  .z = m.real("search_z"),
                                  .win_reward = m.real("win_reward")},
                     .target = m.text("search_target") == "move"       ? MmdSearchTeacherOptions::Target::kMove
                               : m.text("search_target") == "improved" ? MmdSearchTeacherOptions::Target::kImproved
                                                                       : MmdSearchTeacherOptions::Target::kOverrides,
                     .temperature = m.real("search_temperature")},
          .opponents = m.list("opponents"),
          .initial_policy = m.text("initial_policy"),
          .opponent_priority = m.real("opponent_priority"),
          .opponent_decay = m.real("opponent_decay"),
          .overlap = m.flag("overlap"),
          .train_policy = m.flag("train_policy")};
}

MmdOpponentName parse_mmd_opponent(const std::string& entry, const std::string& where) {
  for (const std::string_view prefix : {"checkpoint:", "checkpoint-sampled:"})
    if (entry.rfind(prefix, 0) == 0) {
      std::string path = entry.substr(prefix.size());
      if (path.empty()) throw InputError(fmt::format("{}: mmd.opponents: '{}' names no path", where, entry));
      return {.bot = {}, .path = std::move(path), .greedy = prefix == "checkpoint:"};
    }
  const auto bots = lc::bot_names();
  if (!lc::names_bot(entry))
    throw InputError(
        fmt::format("{}: mmd.opponents: '{}' is neither a bot ({}, or heuristic_expert?key=value&...: a variant) nor "
                    "checkpoint:PATH (a run directory, a checkpoint or an exported model; greedy play) or "
                    "checkpoint-sampled:PATH",
                    where, entry, join_names(bots)));
  try {
    if (entry.starts_with(lc::kExpertVariantPrefix))
      (void)lc::parse_expert_params(std::string_view(entry).substr(lc::kExpertVariantPrefix.size()));
    if (entry.starts_with(lc::kIsmctsPrefix))
      (void)lc::parse_ismcts_params(std::string_view(entry).substr(lc::kIsmctsPrefix.size()));
  } catch (const InputError& e) {
    throw InputError(fmt::format("{}: mmd.opponents: '{}': {}", where, entry, e.what()));
  }
  return {.bot = entry, .path = {}};
}

namespace {

void validate_mmd(const Config& c, const KeyOrigin& origin) {
  const AlgorithmSettings& m = c.algorithm_options.at("mmd");
  const bool search_teacher = m.text("teacher") != "bot";  // "search" or "lookahead"
  // The bot's moves are needed by bot_share, and by bc_weight unless the search teaches.
  for (const std::string key : {"bc_weight", "bot_share"})
    if (const double value = m.real(key); value > 0 && c.run.game != "lost_cities" && !(search_teacher && key == "bc_weight"))
      throw InputError(
          fmt::format("{}: mmd.{} = {}: mmd.bc_weight and mmd.bot_share need a game with bots (run.game = "
                      "'lost_cities'); this run's game is '{}'",
                      origin(std::string("mmd.") + key), key, value, c.run.game));
  if (search_teacher && m.real("bc_weight") == 0)
    throw InputError(
        fmt::format("{}: mmd.teacher = '{}' with mmd.bc_weight = 0: the search's moves would weigh nothing; "
                    "set mmd.bc_weight > 0 (e.g. 1)",
                    origin("mmd.teacher"), m.text("teacher")));
  if (m.text("teacher") == "search" && m.text("value_input") != "info")
    throw InputError(
        fmt::format("{}: mmd.teacher = 'search' with mmd.value_input = '{}': the search values its leaves with the "
                    "value network from the searching player's information state, and this value network reads "
                    "the opponent's hand too; set mmd.value_input = 'info' or mmd.teacher = 'bot'",
                    origin("mmd.value_input"), m.text("value_input")));
  if (m.text("value_input") == "world") {
    if (m.text("teacher") == "lookahead")
      throw InputError(
          fmt::format("{}: mmd.teacher = 'lookahead' with mmd.value_input = 'world': the lookahead's leaves would be "
                      "valued knowing the real deck's order, so the teacher would favour moves for draws no player can "
                      "see; set mmd.value_input = 'full' or 'info'",
                      origin("mmd.value_input")));
    if (traversal_world_width(c.run.game, game_settings(c)) == 0)
      throw InputError(
          fmt::format("{}: mmd.value_input = 'world' reads the order a deck was dealt in, and '{}' deals no deck "
                      "(lost_cities does); set mmd.value_input = 'full' or 'info'",
                      origin("mmd.value_input"), c.run.game));
  }
  if (search_teacher && m.real("search_share") == 0)
    throw InputError(
        fmt::format("{}: mmd.teacher = '{}' with mmd.search_share = 0: no decision would be searched; set "
                    "it (e.g. 0.02)",
                    origin("mmd.search_share"), m.text("teacher")));
  if (!search_teacher && m.real("search_share") > 0)
    throw InputError(
        fmt::format("{}: mmd.search_share = {} but mmd.teacher = '{}': the share is the search teacher's; set "
                    "mmd.teacher = 'search'",
                    origin("mmd.search_share"), m.real("search_share"), m.text("teacher")));
  if (m.real("bot_share") + m.real("snapshot_share") + m.real("opponent_share") > 1)
    throw InputError(fmt::format("{}: mmd.bot_share + mmd.snapshot_share + mmd.opponent_share = {} + {} + {} (at most 1)",
                                 origin("mmd.opponent_share"), m.real("bot_share"), m.real("snapshot_share"),
                                 m.real("opponent_share")));
  const auto& opponents = m.list("opponents");
  if (static_cast<int>(opponents.size()) > MmdLeague::kMaxOpponents)
    throw InputError(fmt::format("{}: mmd.opponents lists {} opponents (at most {})", origin("mmd.opponents"), opponents.size(),
                                 MmdLeague::kMaxOpponents));
  for (const auto& entry : opponents)
    if (const MmdOpponentName o = parse_mmd_opponent(entry, origin("mmd.opponents"));
        !o.bot.empty() && c.run.game != "lost_cities")
      throw InputError(
          fmt::format("{}: mmd.opponents: the bot '{}' needs a game with bots (lost_cities); this run's game is "
                      "'{}' (checkpoint:PATH names a trained opponent)",
                      origin("mmd.opponents"), entry, c.run.game));
  // opponent_share > 0 with no opponents is refused when the trainer is made (make_mmd_trainer):
  // a config may leave the target to the command line (configs/leduc_exploiter.toml).
  if (!opponents.empty() && m.real("opponent_share") == 0)
    throw InputError(
        fmt::format("{}: mmd.opponents is set but mmd.opponent_share = 0: no rollout would play them", origin("mmd.opponents")));
  if (const std::string& init = m.text("initial_policy"); !init.empty() && init.rfind("checkpoint:", 0) != 0)
    throw InputError(
        fmt::format("{}: mmd.initial_policy = '{}': expected checkpoint:PATH (a run directory, a checkpoint or an "
                    "exported model) or nothing",
                    origin("mmd.initial_policy"), init));
  if (m.integer("max_actions") == 0 && c.run.game == "lost_cities")
    throw InputError(
        fmt::format("{}: mmd.max_actions = 0 (no cap) on lost_cities: games can loop (drawing and "
                    "discarding) and a rollout would never end; set a cap such as 1000",
                    origin("mmd.max_actions")));
  if (m.real("critic_deviation") > 0 && m.flag("train_policy"))
    throw InputError(
        fmt::format("{}: mmd.critic_deviation = {} with mmd.train_policy = true: a deviation is a move the policy did "
                    "not sample, which its policy gradient cannot learn from; deviations are for fitting a critic to "
                    "a fixed policy: set mmd.train_policy = false (docs/mmd.md)",
                    origin("mmd.critic_deviation"), m.real("critic_deviation")));
  if (c.optimization.ema_decay > 0)
    throw InputError(
        fmt::format("{}: optimization.ema_decay = {}: MMD's policy gradient needs the policy that played "
                    "its rollouts to be the one it trains (no weight average); set it to 0",
                    origin("optimization.ema_decay"), c.optimization.ema_decay));
}

}  // namespace

void register_mmd_algorithm(TrainerFactory make_trainer) {
  constexpr std::int64_t kBig = std::int64_t{1} << 40, kMaxRows = 1 << 24;
  register_algorithm({
      .name = "mmd",
      .description = "mmd (Sokota et al. 2022: self-play policy gradient with a KL pull toward a magnet policy that moves)",
      // Its learning rate, weight decay and gradient clip are optimization.*.
      .options =
          {integer_option("rollouts_per_iteration", 256, 1, 100'000'000, "self-play games per iteration"),
           integer_option("epochs", 4, 1, 1000, "passes of the policy and value training over an iteration's samples"),
           integer_option("batch_size", 1024, 1, kMaxRows, "batch of a policy or value step"),
           real_option("clip", 0.2, 1e-6, 10, "the ratio pi/pi_behaviour is clipped to 1 +- clip in the surrogate (PPO)"),
           real_option("magnet_weight", 0.05, 0, 1e6, "weight alpha of KL(pi || magnet)"),
           integer_option("magnet_every", 20, 0, 100'000'000,
                          "iterations between moves of the magnet to the current policy (0 = never)"),
           real_option("entropy_weight", 0, 0, 1e6, "entropy bonus (a KL pull toward the uniform policy: MMD's fixed magnet)"),
           bool_option("normalize_advantages", false,
                       "standardise the advantages over each batch (the magnet and entropy weights are then relative to "
                       "advantages of unit scale)"),
           real_option("reward_scale", 1, 1e-9, 1e9, "a game's reward is its return / reward_scale"),
           string_option("value_input", "info", {"info", "full", "world"},
                         "what the value network (the advantages' baseline) reads: info (the information state of the "
                         "player to move, as the policy), full (that and the opponent's: its hand, a perfect-information "
                         "critic; the policy still reads only its own) or world (full and the order the deck was dealt "
                         "in, the draws to come: lost_cities; docs/mmd.md)"),
           real_option("gae_lambda", 0.95, 0, 1,
                       "lambda of generalised advantage estimation (1 = Monte-Carlo return minus the value baseline)"),
           real_option("win_reward", 0, 0, 1e9,
                       "return units (points) added to a won game's return and taken from a lost one's before "
                       "reward_scale: the objective weighs winning beside the score difference (0 = the return alone; "
                       "the value network then estimates the shaped return: docs/mmd.md)"),
           integer_option("max_actions", 1000, 0, 100'000'000,
                          "actions before a rollout is cut off and valued by traversal.cutoff_value_mode (0 = none)"),
           // Checked whatever the algorithm (as traversal.opponent_bot is).
           string_option("bot", "heuristic_balanced", lc::bot_names(), "the bot of bot_share and bc_weight (lost_cities)"),
           real_option("bc_weight", 0, 0, 1e6,
                       "weight of the cross-entropy toward mmd.bot's moves (behaviour cloning) at iteration 1"),
           integer_option("bc_fade_iterations", 0, 0, 100'000'000,
                          "the cloning weight falls linearly to 0 at this iteration (0 = it never fades)"),
           real_option("bot_share", 0, 0, 1, "share of rollouts whose second seat is mmd.bot"),
           string_option("teacher", "bot", {"bot", "search", "lookahead"},
                         "whose moves the cloning term (bc_weight) follows: bot (mmd.bot's, every learning decision), search "
                         "(determinized search over the rollouts' own networks on search_share of the decisions: expert "
                         "iteration) or lookahead (the same from the rollout's own deal with its own opponent, the "
                         "queries batched with the rollouts'; docs/mmd.md)"),
           real_option("search_share", 0, 0, 1, "share of the learning decisions the search teacher searches"),
           integer_option("search_k", 3, 2, kMaxSearchCandidates,
                          "the search teacher's candidates: the policy's k most probable moves"),
           integer_option("search_deals", 16, 1, 4096, "the search teacher's deals (determinizations) per decision"),
           integer_option("search_depth", 4, 0, 100'000,
                          "moves of a search rollout before the value network values it (0 = to the end or search_cap)"),
           integer_option("search_cap", 200, 1, 100'000, "moves of a search rollout at most"),
           string_option("search_target", "move", {"move", "improved", "overrides"},
                         "the search teacher's target: move (the search's move, one-hot), improved (the policy re-weighted "
                         "by exp((q - mean q) / search_temperature) on the candidates: the policy itself where search finds no "
                         "difference) or overrides (the improved target only where the search's move is not the policy's "
                         "first, a significant lead with search_z > 0; no cloning term elsewhere)"),
           real_option("search_temperature", 5, 1e-6, 1e9, "the improved target's temperature (the game's return units)"),
           real_option("search_prior", 5, 0, 1e6,
                       "the search's bonus per unit of policy probability, in the game's return units (points): it "
                       "overrides the policy only on clear evidence"),
           real_option("search_z", 0, 0, 1e6,
                       "the search's paired test: a move other than the policy's first overrides it only when its mean "
                       "difference from the first over the same deals exceeds search_z standard errors (0 = no test)"),
           real_option("snapshot_share", 0, 0, 1, "share of rollouts whose second seat is a past snapshot of the policy"),
           list_option("opponents", {},
                       "the league: fixed opponents of opponent_share of the rollouts, each a bot's name, checkpoint:PATH (a "
                       "run directory, a checkpoint or an exported model such as models/lost-cities-mmd; greedy play, as in "
                       "matches) or checkpoint-sampled:PATH (its softmax); with only a "
                       "target and opponent_share = 1 the run trains an exploiter of it (docs/mmd.md)"),
           string_option("initial_policy", "", {},
                         "checkpoint:PATH: the policy (and the magnet) start as that trained policy's network that plays "
                         "(same network shape, or a smaller one, grown to the run's: docs/mmd.md; e.g. an exploiter that "
                         "starts from its target); empty: a fresh network"),
           real_option("opponent_share", 0, 0, 1, "share of rollouts whose second seat is drawn from mmd.opponents"),
           real_option("opponent_priority", 0, 0, 100,
                       "how the league's opponent is drawn: weight max(1 - r, 0.02)^p, r the learner's running score rate "
                       "against it (0 = uniform; 1 to 3 favour those it still loses to)"),
           real_option("opponent_decay", 0.95, 0, 1,
                       "per-iteration decay of the league's results behind r (1 = every game since the start counts alike)"),
           integer_option("snapshot_every", 10, 1, 100'000'000, "iterations between snapshots of the policy kept as opponents"),
           integer_option("snapshots_kept", 20, 1, 100'000, "the newest snapshots an opponent is drawn from"),
           integer_option("capacity", 1'000'000, 1, kBig, "samples an iteration keeps (a reservoir beyond)"),
           bool_option("overlap", false,
                       "the next iteration's rollouts play while this iteration's samples train, against the networks "
                       "published one iteration before (one process; twice the memories; docs/mmd.md)"),
           bool_option("train_policy", true,
                       "false: the policy stays as it starts (mmd.initial_policy or a resumed checkpoint) and only the "
                       "value network trains on its rollouts: a critic fitted to a fixed policy (docs/mmd.md)"),
           real_option("critic_deviation", 0, 0, 1,
                       "share of the learning decisions on which the player plays one of the policy's critic_deviation_k "
                       "most probable moves, drawn uniformly, instead of sampling it: the critic also sees the states a "
                       "search's candidates lead to, its targets still the policy's (the traces stop at a deviation); "
                       "needs train_policy = false (docs/mmd.md)"),
           integer_option("critic_deviation_k", 3, 2, kMaxSearchCandidates,
                          "the moves a deviation draws from: the policy's k most probable legal ones")},
      .networks = [](const Config& c, int W, int A) { return mmd_networks(W, A, value_width(c, W)); },
      .playing_network = kPolicyNet,
      .validate = validate_mmd,
      // One iteration's policy samples (W → 4·A + 1) and value samples (value_width → 1); two with overlap.
      .memory =
          [](const Config& c, int W, int A) {
            const AlgorithmSettings& m = c.algorithm_options.at("mmd");
            const std::int64_t capacity = m.integer("capacity");
            const int sample_width = value_width(c, W);
            const double per = static_cast<double>(ReservoirMemory::bytes_per_sample(W, mmd_target_width(A)) +
                                                   ReservoirMemory::bytes_per_sample(sample_width, 1)) *
                               (m.flag("overlap") ? 2 : 1);
            return MemoryNeed{.bytes = per * static_cast<double>(capacity),
                              .what = fmt::format("mmd.capacity = {} needs", capacity),
                              .detail = fmt::format("{} bytes per sample", static_cast<std::int64_t>(per)),
                              .fix = "lower it"};
          },
      // mmd.bot: the opponent of bot_share, the teacher of bc_weight, the cut-off rollouts.
      .opponent_bot =
          [](const Config& c) {
            const AlgorithmSettings& m = c.algorithm_options.at("mmd");
            return (m.real("bc_weight") > 0 && m.text("teacher") == "bot") || m.real("bot_share") > 0 ||
                           c.traversal.cutoff_value_mode == "bot_rollout"
                       ? m.text("bot")
                       : std::string();
          },
      .distributed = true,    // rollout ranks: mmd/trainer.cc serve_learner
      .data_parallel = true,  // distributed.learners: the value net and the policy train on ranks 0..N-1
      .advantage_snapshots = false,
      .make_trainer = make_trainer,
  });
}

}  // namespace cfr
