#pragma once
// Loading a trained policy from a checkpoint: CHECKPOINT is a checkpoint directory
// (RUN_DIR/checkpoints/iter-NNNNNN) or a run directory (its latest checkpoint). The run's
// config.toml gives the game, rules, encoding and network shape.
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "apps/run/config.h"
#include "apps/run/play_mode.h"
#include "engine/games/bots.h"
#include "engine/games/match.h"
#include "engine/games/players.h"
#include "engine/tabular/policy.h"

namespace cfr {

struct LoadedCheckpoint;  // networks + config (apps/players/checkpoint_policy.cc)
class Evaluator;
struct LostCitiesTraversalGame;

/// The strategy network on Lost Cities states, each encoded from its mover's seat: fills legal
/// (one mask per state) and out (num_actions logits per state), in chunks the evaluator accepts.
/// `in` is scratch space. One forward (or a few, past the evaluator's max_batch) for all of them.
void forward_states(Evaluator& net, const LostCitiesTraversalGame& game, std::span<const lc::State* const> states,
                    std::vector<float>& in, std::vector<float>& out, std::vector<ActionMask>& legal);

/// A strategy network as a Lost Cities player deciding many games per forward
/// (lc::run_match_players): one forward per round of pending decisions, never one per decision.
/// `keep_alive` holds whatever owns the evaluator (may be null). `name` is the player's name in
/// match reports (empty: "checkpoint", or "checkpoint-sampled" for sampled play).
std::unique_ptr<lc::BatchBot> make_strategy_batch_bot(Evaluator& strategy, const LostCitiesTraversalGame& game,
                                                      PlayMode play = PlayMode::kGreedy,
                                                      std::shared_ptr<void> keep_alive = nullptr, std::string name = {});

struct CheckpointPolicy {
  Config config;
  int iteration = 0;
  std::string checkpoint_dir;  // the checkpoint directory loaded (a run directory's latest when loaded)
  std::shared_ptr<LoadedCheckpoint> state;
  /// Lost Cities: the strategy network as a player deciding many games per forward, named `name`
  /// in match reports (the player as the user gave it, e.g. "checkpoint:runs/x"; empty:
  /// "checkpoint").
  std::unique_ptr<lc::BatchBot> batch_bot(PlayMode play = PlayMode::kGreedy, std::string name = {}) const;
  /// Kuhn / Leduc: the strategy network's policy on every information set.
  TabularPolicy tabular(const GameTree& tree) const;
  /// The strategy network and the game adapter (encoding) it reads (the search player's).
  Evaluator& strategy() const;
  /// The network that plays, flattened (NetworkSet::published_weights).
  std::vector<float> weights() const;
  /// The run's value network on the same inputs (an MMD checkpoint's `value`: the expected final
  /// return / mmd.reward_scale of the player to move, encoded from its seat), or null when the
  /// checkpoint has none (other algorithms, a value network reading more than the information
  /// state, models exported without --value-from).
  Evaluator* value() const;
  /// value()'s index in the loaded network set; -1 without one.
  int value_network() const;
  /// What value() estimates, in score points per unit of its output (mmd.reward_scale); 0 without one.
  double value_scale() const;
  /// mmd.win_reward of an MMD checkpoint (its value network estimates the return so shaped); 0 otherwise.
  double win_reward() const;
  const LostCitiesTraversalGame& game() const;
};

/// Throws InputError naming the path and what is wrong or missing. `path` is a run directory
/// (its latest checkpoint), a checkpoint directory, or an exported policy (export_policy: a
/// checkpoint directory whose meta.json lists only the network that plays, or it and the value
/// network). A run directory may
/// be in training: when the checkpoint `latest` named vanishes or changes while it is read (the run
/// wrote a newer one and removed it), the newest complete checkpoint `latest` names then is loaded
/// instead; a checkpoint that fails its checks while `latest` still names it is refused.
/// `invariant_chunk` is the loaded networks' network.invariant_chunk (0: whole batches).
CheckpointPolicy load_checkpoint_policy(const std::string& path, int invariant_chunk = 0);

/// `p` reading the Lost Cities encoding `to` when `to` holds every block of p's encoding (the same
/// rules) and more (opt-in blocks such as encoding.opponent_known_cards or encoding.slot_cards;
/// lc::encoding_column_map): `p` becomes its network that plays alone, the first layer widened
/// with zero weights for the new inputs, so that it plays exactly as before until training gives
/// them weight. Returns the added blocks ("encoding.slot_cards, ..."); empty, `p` unchanged, when
/// the encodings are equal or `to` lacks one of p's blocks (the caller's own check names that).
/// `invariant_chunk` as in load_checkpoint_policy.
std::string widen_policy_inputs(CheckpointPolicy& p, const lc::EncodingOptions& to, int invariant_chunk = 0);

/// What export_policy wrote.
struct ExportedPolicy {
  int iteration = 0;
  std::string algorithm;
  std::string network;  // the name of the network that plays
  std::int64_t parameters = 0;
  std::vector<int> averaged_iterations;  // with average > 1: the checkpoints' iterations, oldest first
  std::string value_from;                // with value_from: the checkpoint directory its value network came from
  int value_iteration = 0;               // … and that checkpoint's iteration
  bool value_fitted_to_policy = false;   // … whose own playing network is the exported one, weight for weight
};
/// The network that plays of checkpoint (or run) `from` (with `value_from`, a value network after
/// it), as checkpoint directory `out` (config.toml, meta.json listing the networks, nets.pt without
/// optimiser moments or memories): a shipped model that `checkpoint:OUT` loads in every command. Written beside `out`
/// (into a new folder `out`.tmp-XXXXXX of its own, mkdtemp: nothing already there is touched),
/// then each of those three files renamed into `out` (created if missing): an
/// earlier export's files are replaced, every other file in `out` is kept. InputError when `out`
/// is or holds `from`, or exists and is neither empty nor an earlier export (no manifest.json).
/// `average` > 1: the network is the weight-by-weight mean of the playing networks of run `from`'s
/// `average` newest checkpoints (its latest and the ones before it; a checkpoint weight average,
/// as stochastic weight averaging takes it), the rest (config, iteration) the latest's; InputError
/// when `from` is not a run directory, holds fewer checkpoints or networks of another shape.
/// `value_from` (a checkpoint or run directory; empty: none): the export holds that checkpoint's
/// value network too (CheckpointPolicy::value), after the network that plays, so that the search
/// player's value leaves (`search:OUT?depth=D`) read it: a critic trained beside the policy, or one
/// fitted to the exported policy afterwards (mmd.train_policy = false from mmd.initial_policy =
/// "checkpoint:OUT"). InputError unless it is an MMD checkpoint of the same game, rules, encoding,
/// network shape and mmd.reward_scale whose value network reads the information state (the
/// model's config.toml takes its mmd.value_input). What is written is loaded back before OUT is
/// touched (InputError, nothing replaced, when it would not load).
ExportedPolicy export_policy(const std::string& from, const std::string& out, int average = 1,
                             const std::string& value_from = {});

/// Single Deep CFR's player from a run trained with checkpoint.keep_snapshots
/// (apps/run/snapshots.h): game k of a match plays the snapshot of iteration t drawn with
/// weight t (linear weighting; 1 under uniform weighting) from derive_seed(kSnapshotPlayStream, k),
/// sampling each move from that iteration's regret-matching policy of the seat's advantage network;
/// moves are decided in batched forwards per snapshot. InputError naming what is wrong (no
/// snapshots, another game or rules, a snapshot that fails its checks).
std::unique_ptr<lc::BatchBot> make_snapshot_player(const std::string& run_dir, const lc::Rules& rules);
inline constexpr std::uint64_t kSnapshotPlayStream = 0x534443465250ULL;  // "SDCFRP"

/// A side of a match by name: a bot or external:COMMAND (lc::make_player), or "checkpoint:PATH"
/// (greedy play) or "checkpoint-sampled:PATH" (sampled play), a trained policy that decides its
/// moves in batched forwards (one per round of the match's live games), or "snapshots:RUN_DIR"
/// (make_snapshot_player). A trained player's name in match reports is `name` as given
/// ("checkpoint:runs/x"), so that two checkpoints are told apart.
using AnyPlayer = lc::AnyPlayer;
/// Throws InputError for an unknown bot (naming the valid ones), an unreadable checkpoint, a
/// checkpoint trained with other rules, or an external command that cannot be run.
/// "search:PATH?..." is the search player (apps/players/search_player.h). Defined in apps/players/any_player.cc.
AnyPlayer make_any_player(const std::string& name, const lc::Rules& rules, const lc::ExternalOptions& external = {});

/// What a PLAYER argument accepts, for --help texts.
inline constexpr std::string_view kPlayerKinds =
    "a bot's name, checkpoint:PATH, checkpoint-sampled:PATH, snapshots:RUN_DIR, search:PATH?k=3&n=8 or external:COMMAND";

}  // namespace cfr
