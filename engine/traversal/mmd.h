#pragma once
// MMD self-play rollouts as coroutines (magnetic mirror descent, Sokota et al. 2022, in its deep
// reinforcement-learning form), generic over the game, on the same contexts, query port and
// schedulers as Deep CFR's traversals (traversal.h): a rollout suspends at every network query
// and a scheduler's batcher answers it, so rollouts are batched exactly like traversals and a
// rollout's samples depend only on its RNG stream (seed, iteration, 0, index).
//
// MMD queries four networks (mmd_networks, apps/algorithms/mmd/networks.h): the policy π (logits
// over the actions), the value network V (one output: the expected return of the player to move,
// in reward units), the magnet ρ (a frozen copy of an earlier π, the KL anchor) and the opponent
// (a past snapshot of π, when a rollout draws one).
//
// mmd_rollout(ctx, game, o): one game. A rollout first draws who sits in the second seat: with
// probability bot_share the game's bot (Lost Cities: mmd.bot), with snapshot_share the past
// snapshot, with opponent_share one of the league's fixed opponents (mmd.opponents: a bot of the
// game, game.league_bot_action, or a fixed network, queried as network kNumMmdNets + its index
// among the networks; which one is drawn from o.league's cumulative probabilities, a second draw
// of the same stream), else π itself; then the learner's seat is index % 2 (self-play: both
// seats learn). A league game reports its opponent and the learner's return in ctx.opponent and
// ctx.learner_return (the trainer's league statistics). At
// each learning decision the player asks π, ρ and V about its information state, samples its
// action from π and stores one sample (SampleBuffer ctx.advantage, input width W, target width
// 4·A + 1, the layout of NetLoss::kClippedPolicyGradient): the advantage at the taken action,
// π(a) at the taken action, ρ, the bot's move (one-hot, when bc_targets) and the value target.
// At the end (or at max_actions, valued by the score difference) each player's reward is its
// return (plus win_reward if it won, minus it if it lost) / reward_scale, and per player,
// backwards over its own decisions (γ = 1, the only reward is the last), generalised advantage
// estimation: δ_t = V(s_{t+1}) − V(s_t) (the reward in place of V after the last),
// Â_t = δ_t + λ·Â_{t+1}; the value target is Â_t + V(s_t).
//
// With a search teacher (o.teacher: mmd.teacher = "search", expert iteration), a share of the
// learning decisions also runs determinized_search (determinized_search.h) over the networks the
// rollouts play, and its move, not the bot's, is the sample's cloning one-hot; the rollout still
// plays the action it sampled from π (the policy gradient stays on-policy).
//
// What V reads (MmdRolloutOptions::value_input, mmd.value_input): the information state, the full
// state (both players' information states), or the full state and the deck's order ("world": then
// the rollout draws the deck in the order it was dealt, mmd_apply).
//
// The loop is iterative: the native stack and the frames do not grow with the game.
#include <algorithm>
#include <array>
#include <atomic>
#include <concepts>

#include "engine/core/task.h"
#include "engine/traversal/determinized_search.h"
#include "engine/traversal/traversal.h"
#include "engine/traversal/traversal_context.h"
#include "engine/traversal/traversal_games.h"

namespace cfr {

/// MMD's network set in query order.
enum MmdNetId : int { kPolicyNet = 0, kMmdValueNet = 1, kMagnetNet = 2, kOpponentNet = 3, kNumMmdNets = 4 };

/// The width of an MMD sample's target: 4·A + 1 (see above).
constexpr int mmd_target_width(int num_actions) noexcept { return 4 * num_actions + 1; }

/// What MMD's value network reads (mmd.value_input): the information state of the player to move
/// (kInfo), the full state (kFull: the opponent's too), or the full state and the deck's order
/// (kWorld: games with kGameHasWorld).
enum class MmdValueInput : std::uint8_t { kInfo, kFull, kWorld };

/// Who plays the seat the learner does not hold in a rollout.
enum class MmdSeat : std::uint8_t { kSelf, kSnapshot, kBot, kLeague };

/// That seat as a rollout drew it: with kLeague, which opponent (its network among the league's,
/// −1 for a bot, and whether it plays greedily) or which bot.
struct MmdOpponent {
  MmdSeat seat = MmdSeat::kSelf;
  int league = -1;
  int net = -1;
  bool greedy = false;
  int bot = -1;
};

/// The league's fixed opponents as a rollout draws them (mmd.opponents; the trainer sets the
/// probabilities every iteration).
struct MmdLeague {
  static constexpr int kMaxOpponents = 32;
  int size = 0;
  std::array<double, kMaxOpponents> cumulative{};  // P(opponent ≤ i); the last is 1
  /// Opponent i is the game's league bot bot[i] when net[i] < 0, else network kNumMmdNets + net[i],
  /// which plays greedily (argmax of the legal logits, lowest id on ties: as checkpoint:PATH plays
  /// in matches) when greedy[i], else samples its softmax (checkpoint-sampled:PATH).
  std::array<std::int8_t, kMaxOpponents> bot{}, net{}, greedy{};
};

/// MMD's search teacher as configured (mmd.teacher = "search" or "lookahead", mmd.search_*).
struct MmdSearchTeacherOptions {
  double share = 0;  // of the learning decisions searched (0: no teacher)
  /// false: determinized search over the policy (resampled deals, π in both seats; `nets`);
  /// true: the lookahead from the rollout's own state with its own opponent (mmd_lookahead:
  /// settings.deals continuations per candidate, queries batched like the rollout's).
  bool lookahead = false;
  SearchSettings settings;
  /// The target (mmd.search_target): kMove, the search's move (a one-hot); kImproved, the
  /// improved policy (improved_policy(): π itself where the search finds no difference);
  /// kOverrides, the improved policy only where the search's move is not the policy's first
  /// candidate (it overrode the policy: with settings.z > 0, a significant lead), no target (no
  /// cloning term) elsewhere: the search's agreements, mostly noise around π, pull nothing.
  enum class Target { kMove, kImproved, kOverrides };
  Target target = Target::kMove;
  double temperature = 5.0;
};

/// MMD's search teacher at work: on `options.share` of the learning decisions, the search over
/// `nets` (the networks the rollouts play: policy and value) gives the cloning target. Its
/// counters are the rollouts' (atomic: rollouts may run on several threads); the trainer reads
/// and resets them after each iteration's rollouts.
struct MmdSearchTeacher {
  MmdSearchTeacherOptions options;
  SearchNets* nets = nullptr;
  std::atomic<std::int64_t> searches{0}, overriding{0}, moves{0}, forwards{0};
};

struct MmdRolloutOptions {
  double reward_scale = 1.0;  // rewards are return / reward_scale
  double gae_lambda = 0.95;   // 1: Monte-Carlo return minus the baseline
  /// mmd.win_reward: return units added to a won game's return and taken from a lost one's (0 for
  /// a tie) before the scaling: the objective weighs winning beside the score difference. V then
  /// estimates that shaped return; the league's statistics (ctx.learner_return) keep the game's.
  double win_reward = 0;
  double bot_share = 0;       // rollouts whose second seat is the game's bot
  double snapshot_share = 0;  // rollouts whose second seat is a past snapshot (kOpponentNet)
  double opponent_share = 0;  // rollouts whose second seat is one of league's opponents
  MmdLeague league;
  bool bc_targets = false;              // store the bot's move at every learning decision (cloning)
  MmdSearchTeacher* teacher = nullptr;  // or the search's move on a share of them (then bc_targets is false)
  int max_actions = 0;                  // actions per game before it is cut off (0 = none)
  bool magnet = true;                   // ask ρ (false when its weight is 0: the stored ρ is then π, KL 0)
  CutoffValue cutoff = CutoffValue::kScoreDiff;
  /// What V reads (mmd.value_input; mmd_encode_value_input): beyond the information state, the
  /// policy never reads it; a sample's input is V's, the policy's its first W floats.
  MmdValueInput value_input = MmdValueInput::kInfo;
  /// mmd.critic_deviation: on this share of the learning decisions the player plays one of π's
  /// deviation_k most probable legal moves, drawn uniformly, instead of sampling π, so that the
  /// value network also sees the states a search's candidates lead to (a critic for the search's
  /// leaves). The value targets stay π's: every trace, both players', stops at a deviation and
  /// bootstraps from V there (the other player's from −V: zero-sum), and the deviation's own
  /// sample keeps its V as target (advantage 0). Off-policy for the policy gradient: the
  /// algorithm allows it only with mmd.train_policy = false.
  double deviation = 0;
  int deviation_k = 3;
};

/// The width of the value network's input and of an MMD sample's input: the information state
/// (W), the full state (2·W), or that and the deck's order (2·W + the game's world_width()).
constexpr int mmd_sample_width(int input_width, MmdValueInput v, int world_width) noexcept {
  return v == MmdValueInput::kInfo ? input_width : v == MmdValueInput::kFull ? 2 * input_width : 2 * input_width + world_width;
}

/// The full state as the value network of mmd.value_input = "full" reads it, from the seat of
/// player p: p's information state, then the opponent's (whose hand it holds: with it the rest of
/// the deal is known too, the deck's order apart, which chance draws when a card is drawn). A
/// baseline that reads hidden information still leaves the policy gradient unbiased (it does not
/// depend on the action, whose probability depends on p's information state only) and takes the
/// opponent's hand out of the advantage's noise (the perfect-information critic of
/// PerfectDou, Yang et al. 2022, and of asymmetric actor-critic methods).
template <class G>
void mmd_encode_full_state(const G& game, const typename G::State& s, int p, float* out) {
  game.encode(s, p, out);
  game.encode(s, 1 - p, out + game.input_width());
}

/// V's input at s from p's seat (mmd_sample_width floats): p's information state; with kFull the
/// opponent's after it; with kWorld the deck's order after both (encode_world). The order is the
/// hidden future: with the opponent's hand it leaves a critic, against a fixed opponent, little but
/// the players' own choices to be uncertain about; the policy gradient stays unbiased, as above (a
/// player's action depends on its information state only, and the order is dealt before play).
template <class G>
void mmd_encode_value_input(const G& game, const typename G::State& s, int p, MmdValueInput v, float* out) {
  if (v == MmdValueInput::kInfo) {
    game.encode(s, p, out);
    return;
  }
  mmd_encode_full_state(game, s, p, out);
  if constexpr (kGameHasWorld<G>) {
    if (v == MmdValueInput::kWorld) game.encode_world(s, p, out + 2 * game.input_width());
  }
}

/// An action of a rollout: with kWorld the deck keeps the order it was dealt in (the deal shuffled
/// it uniformly, so play is distributed as under game.apply, which draws a random deck card at
/// each draw; a critic reading the order must see the cards that will come), else game.apply.
template <class G>
void mmd_apply(const G& game, MmdValueInput v, typename G::State& s, int action, Rng& rng) {
  if constexpr (kGameHasWorld<G>) {
    if (v == MmdValueInput::kWorld) {
      game.apply_dealt(s, action);
      return;
    }
  }
  game.apply(s, action, rng);
}

template <class G>
inline constexpr bool kGameHasBot = requires(const G& g, const typename G::State& st, Rng& r) {
  g.bot_action(st, r);
};
template <class G>
inline constexpr bool kGameHasLeagueBots = requires(const G& g, const typename G::State& st, Rng& r) {
  g.league_bot_action(st, r, 0);
};

/// The move of opponent `w` (not π: seat kSelf is the caller's) at s, player p to move, drawing
/// from rng: the snapshot's or a league network's softmax (or its argmax), a league bot's or the
/// game's bot's move.
template <class G>
Task<int> mmd_opponent_move(TraversalContext& ctx, const G& game, const MmdOpponent& w, const typename G::State& s, int p,
                            ActionMask legal, Rng& rng) {
  if (w.seat == MmdSeat::kSnapshot || (w.seat == MmdSeat::kLeague && w.net >= 0)) {
    float logits[kMaxTraversalActions];
    float* in = ctx.scratch_input(game.input_width());
    game.encode(s, p, in);
    co_await ctx.query(w.seat == MmdSeat::kSnapshot ? static_cast<int>(kOpponentNet) : kNumMmdNets + w.net, in, legal, logits);
    if (w.seat == MmdSeat::kLeague && w.greedy) co_return greedy_action(logits, legal);
    float probs[kMaxTraversalActions];
    masked_softmax(logits, legal, game.num_actions(), probs);
    co_return sample_action(probs, legal, rng);
  }
  if (w.seat == MmdSeat::kLeague) {
    if constexpr (kGameHasLeagueBots<G>) co_return game.league_bot_action(s, rng, w.bot);
    throw InputError("mmd: a bot in mmd.opponents needs a game with bots (lost_cities)");
  }
  if constexpr (kGameHasBot<G>) co_return game.bot_action(s, rng);
  co_return std::countr_zero(legal);  // unreachable: mmd_rollout refuses a bot seat without bots
}

/// MMD's lookahead teacher (mmd.teacher = "lookahead"): the values of the k most probable moves of
/// the learner `me` (probs: π at s) from the rollout's own state, the real deal, with the rollout's
/// own opponent `w` in the other seat. Candidate c is applied and the game continues for `depth`
/// moves (0: to the end or `cap`), π playing the learner's seat (and both in self-play, w.seat =
/// kSelf), then V values the state reached (the full state with value_input = kFull), or the return
/// as it stands at the end or the cap; `deals` continuations per candidate, continuation j drawing
/// from derive_seed(seed, j) for every candidate (common random numbers). Every query is the
/// rollout's own, suspended and batched by the scheduler like the rest of it. Since the state is
/// the real one, a candidate's value is a sample of its value at me's information state under the
/// true beliefs and the opponent who is really there, unlike determinized_search's uniform deals
/// and π as everyone's model. Fills r as determinized_search does (r.forwards: queries).
template <class G>
Task<void> mmd_lookahead(TraversalContext& ctx, const G& game, const MmdRolloutOptions& o, const MmdOpponent& w,
                         const typename G::State& s, int me, const float* probs, std::uint64_t seed, SearchResult& r) {
  const SearchSettings& st = o.teacher->options.settings;
  std::array<int, kMaxSearchCandidates> cand{};
  const int k = search_candidates(probs, s.legal_mask(), st.top_k, cand);
  r = SearchResult{.action = cand[0], .candidates = k, .candidate = cand};
  if (k < 2) co_return;
  const int A = game.num_actions(), W = game.input_width();
  float logits[kMaxTraversalActions];
  float row[kMaxTraversalActions];
  float value[1];
  SearchTally tally;
  std::array<double, kMaxSearchCandidates> deal_values{};
  const int stop = st.depth > 0 ? std::min(st.depth, st.cap) : st.cap;
  for (int j = 0; j < st.deals; ++j) {
    for (int c = 0; c < k; ++c) {  // every candidate on continuation j's stream (common random numbers)
      auto b = s;
      Rng rng(derive_seed(seed, static_cast<std::uint64_t>(j)));
      game.apply(b, cand[static_cast<std::size_t>(c)], rng);
      for (int step = 0; step < stop && !b.is_terminal(); ++step) {
        const int p = b.current_player();
        const ActionMask legal = b.legal_mask();
        int a;
        if (p == me || w.seat == MmdSeat::kSelf) {
          float* in = ctx.scratch_input(W);
          game.encode(b, p, in);
          co_await ctx.query(kPolicyNet, in, legal, logits);
          ++r.forwards;
          masked_softmax(logits, legal, A, row);
          a = sample_action(row, legal, rng);
        } else {
          a = co_await mmd_opponent_move(ctx, game, w, b, p, legal, rng);
        }
        game.apply(b, a, rng);
        ++r.moves;
      }
      double v;
      if (b.is_terminal() || st.depth == 0 || st.depth >= st.cap) {
        v = b.returns(me);
      } else {
        const int p = b.current_player();
        float* in = ctx.scratch_input(mmd_sample_width(W, o.value_input, world_width_of(game)));
        mmd_encode_value_input(game, b, p, o.value_input, in);  // kWorld is refused with the lookahead
        co_await ctx.query(kMmdValueNet, in, b.legal_mask(), value);
        ++r.forwards;
        v = static_cast<double>(value[0]) * o.reward_scale * (p == me ? 1.0 : -1.0);  // zero-sum
      }
      deal_values[static_cast<std::size_t>(c)] = v;
    }
    tally.add_deal(std::span<const double>(deal_values.data(), static_cast<std::size_t>(k)));
  }
  for (int c = 0; c < k; ++c) r.value[static_cast<std::size_t>(c)] = tally.mean(static_cast<std::size_t>(c));
  r.action = cand[static_cast<std::size_t>(
      search_choice(tally, std::span<const int>(cand.data(), static_cast<std::size_t>(k)), probs, st.prior, st.z))];
}

template <class G>
Task<void> mmd_rollout(TraversalContext& ctx, const G& game, const MmdRolloutOptions& o) {
  const int A = game.num_actions();
  const int learner = ctx.index % 2;
  MmdOpponent w;  // the second seat of this game
  if (o.bot_share > 0 || o.snapshot_share > 0 || o.opponent_share > 0) {
    const double u = ctx.rng.uniform();
    w.seat = u < o.bot_share                                         ? MmdSeat::kBot
             : u < o.bot_share + o.snapshot_share                    ? MmdSeat::kSnapshot
             : u < o.bot_share + o.snapshot_share + o.opponent_share ? MmdSeat::kLeague
                                                                     : MmdSeat::kSelf;
    if (w.seat == MmdSeat::kLeague) {
      const double v = ctx.rng.uniform();
      w.league = o.league.size - 1;
      for (int i = 0; i < o.league.size; ++i)
        if (v < o.league.cumulative[static_cast<std::size_t>(i)]) {
          w.league = i;
          break;
        }
      if (w.league < 0) throw InputError("mmd: mmd.opponent_share > 0 with no mmd.opponents");
      const auto l = static_cast<std::size_t>(w.league);
      w.net = o.league.net[l];
      w.greedy = o.league.greedy[l] != 0;
      w.bot = o.league.bot[l];
    }
  }
  const MmdSeat second = w.seat;
  const int league = w.league;
  if constexpr (!kGameHasBot<G>) {
    if (second == MmdSeat::kBot || o.bc_targets)
      throw InputError("mmd: a bot opponent or bot cloning needs a game with bots (lost_cities)");
  }
  float logits[kMaxTraversalActions];
  float probs[kMaxTraversalActions];
  float magnet[kMaxTraversalActions];
  float value[1];
  auto& steps = ctx.rollout;
  auto s = game.new_game(ctx.rng);
  int nodes = 0;
  bool cut = false;
  for (;;) {
    if (s.is_terminal()) break;
    if (o.max_actions > 0 && nodes >= o.max_actions) {
      cut = true;
      break;
    }
    ++nodes;
    const int p = s.current_player();
    const ActionMask legal = s.legal_mask();
    int a;
    if (p == learner || second == MmdSeat::kSelf) {
      const int si = ctx.advantage.push(p, ctx.iteration, legal);
      float* in = ctx.advantage.input(si);
      mmd_encode_value_input(game, s, p, o.value_input, in);  // π and ρ read its first W floats, V all of them
      co_await ctx.query(kPolicyNet, in, legal, logits);
      if (o.magnet) co_await ctx.query(kMagnetNet, in, legal, magnet);
      co_await ctx.query(kMmdValueNet, in, legal, value);
      masked_softmax(logits, legal, A, probs);
      if (o.magnet) masked_softmax(magnet, legal, A, magnet);
      float* t = ctx.advantage.target(si);
      if (o.teacher != nullptr && ctx.rng.uniform() < o.teacher->options.share) {
        SearchResult r;
        if (o.teacher->options.lookahead) {
          co_await mmd_lookahead(ctx, game, o, w, s, p, probs, ctx.rng(), r);
        } else {
          r = determinized_search(game, s, p, probs, o.teacher->options.settings, ctx.rng(), *o.teacher->nets);
        }
        using Target = MmdSearchTeacherOptions::Target;
        const Target target = o.teacher->options.target;
        if (target == Target::kMove) {
          t[3 * A + r.action] = 1.0F;
        } else if (r.candidates > 1 && (target == Target::kImproved || r.action != r.candidate[0])) {
          improved_policy(probs, legal, A, r, o.teacher->options.temperature, t + 3 * A);
        }
        if (r.candidates > 1) {
          o.teacher->searches.fetch_add(1, std::memory_order_relaxed);
          if (r.action != greedy_action(logits, legal)) o.teacher->overriding.fetch_add(1, std::memory_order_relaxed);
          o.teacher->moves.fetch_add(r.moves, std::memory_order_relaxed);
          o.teacher->forwards.fetch_add(r.forwards, std::memory_order_relaxed);
        }
      }
      bool deviated = false;
      if (o.deviation > 0 && ctx.rng.uniform() < o.deviation) {
        std::array<int, kMaxSearchCandidates> candidates{};
        const int k = search_candidates(probs, legal, o.deviation_k, candidates);
        a = candidates[static_cast<std::size_t>(ctx.rng.below(static_cast<std::uint32_t>(k)))];
        deviated = true;
      } else {
        a = sample_action(probs, legal, ctx.rng);
      }
      t[A + a] = std::max(probs[a], 1e-12F);
      std::copy_n(o.magnet ? magnet : probs, A, t + 2 * A);
      if constexpr (kGameHasBot<G>) {
        if (o.bc_targets) t[3 * A + game.bot_action(s, ctx.rng)] = 1.0F;
      }
      steps.push_back({si, a, static_cast<std::int8_t>(p), value[0], deviated});
    } else {
      a = co_await mmd_opponent_move(ctx, game, w, s, p, legal, ctx.rng);
    }
    mmd_apply(game, o.value_input, s, a, ctx.rng);
  }
  ctx.cut_off = cut;
  ctx.nodes += nodes;
  std::array<double, 2> next_value{}, gae{};
  std::array<double, 2> game_return{};
  for (int p = 0; p < 2; ++p) {
    const double r = cut ? cutoff_value(ctx, game, o.cutoff, s, p) : s.returns(p);
    game_return[static_cast<std::size_t>(p)] = r;
    next_value[static_cast<std::size_t>(p)] = win_shaped(r, o.win_reward) / o.reward_scale;
  }
  if (league >= 0) {
    ctx.opponent = league;
    ctx.learner_return = game_return[static_cast<std::size_t>(learner)];
  }
  for (auto it = steps.rbegin(); it != steps.rend(); ++it) {
    const auto p = static_cast<std::size_t>(it->player);
    if (it->deviated) {  // V's own estimate here; the earlier decisions of both players bootstrap from it
      float* t = ctx.advantage.target(it->sample);
      t[it->action] = 0.0F;
      t[4 * A] = it->value;
      next_value[p] = it->value;
      next_value[1 - p] = -it->value;
      gae = {};
      continue;
    }
    const double delta = next_value[p] - it->value;
    gae[p] = delta + o.gae_lambda * gae[p];
    next_value[p] = it->value;
    float* t = ctx.advantage.target(it->sample);
    t[it->action] = static_cast<float>(gae[p]);
    t[4 * A] = static_cast<float>(gae[p] + it->value);
  }
}

}  // namespace cfr
