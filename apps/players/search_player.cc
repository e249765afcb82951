#include "apps/players/search_player.h"

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <cmath>
#include <iostream>
#include <limits>
#include <numeric>
#include <unordered_map>

#include <fmt/format.h>

#include "apps/players/checkpoint_policy.h"
#include "engine/core/errors.h"
#include "engine/core/rng.h"
#include "engine/games/bots.h"
#include "engine/games/ismcts_bot.h"
#include "engine/games/opponent_turns.h"
#include "engine/traversal/determinized_search.h"
#include "engine/traversal/traversal.h"
#include "engine/traversal/traversal_games.h"
#include "engine/traversal/turn_tree.h"
#include "sched/evaluator.h"
#include "sched/scheduler.h"

namespace cfr {

namespace {

int parse_int(const std::string& key, const std::string& v, int lo, int hi) {
  if (v.empty() || v.size() > 9 || v.find_first_not_of("0123456789") != std::string::npos || std::stoi(v) < lo ||
      std::stoi(v) > hi)
    throw InputError(fmt::format("search: {}={}: must be an integer in [{}, {}]", key, v, lo, hi));
  return std::stoi(v);
}

/// A real-valued key: a finite number in [lo, hi] (above lo when open_lo); `want` is the range
/// as its error names it.
double parse_real(const std::string& key, const std::string& v, double lo, double hi, bool open_lo, std::string_view want) {
  char* end = nullptr;
  const double x = std::strtod(v.c_str(), &end);
  if (v.empty() || *end != '\0' || !std::isfinite(x) || x < lo || (open_lo && x == lo) || x > hi)
    throw InputError(fmt::format("search: {}={}: must be a number {}", key, v, want));
  return x;
}
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr std::size_t kMaxOpponentModels = 16;
constexpr int kBotDraws = 16;  // draws of a bot that consults its RNG, to estimate its probability of a move

constexpr std::string_view kSearchKeys =
    "k, n, prior, z, cap, depth, rollout, opp, hist, eps, sched, chunk, belief, pool, btemp, ess, reply, peek, win, rtemp, sims, "
    "wave, c, turn, nest, nn, nd, ismcts, iw, sym";

}  // namespace

SearchOptions parse_search_spec(const std::string& spec, std::string& checkpoint) {
  SearchOptions o;
  const auto q = spec.find('?');
  checkpoint = spec.substr(0, q);
  if (checkpoint.empty()) throw InputError("search: needs a checkpoint, e.g. search:runs/quickstart?k=3&n=8");
  std::string rest = q == std::string::npos ? "" : spec.substr(q + 1);
  std::vector<std::string> seen;
  while (!rest.empty()) {
    const auto amp = rest.find('&');
    const std::string kv = rest.substr(0, amp);
    rest = amp == std::string::npos ? "" : rest.substr(amp + 1);
    const auto eq = kv.find('=');
    if (eq == std::string::npos) throw InputError(fmt::format("search: '{}': want key=value (keys: {})", kv, kSearchKeys));
    const std::string key = kv.substr(0, eq), v = kv.substr(eq + 1);
    // A key given twice would be played with its last value under a name that shows both.
    if (std::find(seen.begin(), seen.end(), key) != seen.end())
      throw InputError(fmt::format("search: key '{}' given twice", key));
    seen.push_back(key);
    if (key == "k")
      o.top_k = parse_int(key, v, 1, 16);
    else if (key == "n")
      o.deals = parse_int(key, v, 1, 4096);
    else if (key == "cap")
      o.rollout_cap = parse_int(key, v, 0, 100000);
    else if (key == "depth")
      o.depth = parse_int(key, v, 0, 100000);
    else if (key == "prior") {
      o.prior = parse_real(key, v, 0, kInf, false, "≥ 0");
    } else if (key == "z") {
      o.z = parse_real(key, v, 0, kInf, false, "≥ 0");
    } else if (key == "rollout") {
      if (v.rfind("bot:", 0) == 0)
        o.rollout_bot = v.substr(4);
      else if (v != "sampled" && v != "greedy")
        throw InputError(fmt::format("search: rollout={}: must be sampled, greedy or bot:NAME", v));
      o.sampled_rollouts = v == "sampled";
    } else if (key == "opp") {
      o.opponent_models.clear();
      for (std::size_t from = 0; from <= v.size();) {
        const auto bar = std::min(v.find('|', from), v.size());
        const std::string m = v.substr(from, bar - from);
        if (m != "net" && (m.rfind("bot:", 0) != 0 || m.size() == 4))
          throw InputError(
              fmt::format("search: opp={}: '{}' must be net or bot:NAME (who plays the opponent in the rollouts)", v, m));
        if (std::find(o.opponent_models.begin(), o.opponent_models.end(), m) != o.opponent_models.end())
          throw InputError(fmt::format("search: opp={}: '{}' twice", v, m));
        o.opponent_models.push_back(m);
        from = bar + 1;
      }
      if (o.opponent_models.size() > kMaxOpponentModels)
        throw InputError(fmt::format("search: opp={}: at most {} models", v, kMaxOpponentModels));
    } else if (key == "hist") {
      o.model_turns = parse_int(key, v, 1, 64);
    } else if (key == "eps") {
      o.model_noise = parse_real(key, v, 0, 1, true, "in (0, 1]");
    } else if (key == "sched") {
      register_builtin_schedulers();
      (void)make_scheduler(v);  // InputError naming the schedulers for an unknown one
      o.scheduler = v;
    } else if (key == "chunk") {
      o.chunk = parse_int(key, v, 0, kMaxEvaluatorBatch);
    } else if (key == "reply") {
      o.replies = parse_int(key, v, 1, kMaxSearchCandidates);
    } else if (key == "belief") {
      o.belief_turns = parse_int(key, v, 0, 32);
    } else if (key == "pool") {
      o.pool = parse_int(key, v, 0, 4096);
    } else if (key == "ess") {
      o.belief_ess = parse_real(key, v, 0, 1, false, "in [0, 1]");
    } else if (key == "win") {
      o.win = parse_real(key, v, 0, kInf, false, "≥ 0");
    } else if (key == "rtemp") {
      o.rollout_temp = parse_real(key, v, 0, kInf, true, "> 0");
    } else if (key == "sims") {
      o.sims = parse_int(key, v, 0, 65536);
    } else if (key == "turn") {
      o.turn_depth = parse_int(key, v, 1, kMaxTurnDepth);
    } else if (key == "wave") {
      o.wave = parse_int(key, v, 1, 4096);
    } else if (key == "c") {
      o.puct = parse_real(key, v, 0, kInf, false, "≥ 0");
    } else if (key == "peek") {
      o.peek = parse_int(key, v, 0, 2);
    } else if (key == "nest") {
      o.nest_k = parse_int(key, v, 0, kMaxSearchCandidates);
    } else if (key == "nn") {
      o.nest_deals = parse_int(key, v, 1, 1024);
    } else if (key == "nd") {
      o.nest_depth = parse_int(key, v, 0, 100000);
    } else if (key == "ismcts") {
      o.ismcts_iters = parse_int(key, v, 0, 200000);
    } else if (key == "sym") {
      o.sym = parse_int(key, v, 1, 128);
    } else if (key == "iw") {
      o.ismcts_weight = parse_real(key, v, 0, kInf, false, "≥ 0");
    } else if (key == "btemp") {
      o.belief_temp = parse_real(key, v, 0, kInf, true, "> 0");
    } else {
      throw InputError(fmt::format("search: unknown key '{}' (keys: {})", key, kSearchKeys));
    }
  }
  return o;
}

namespace {

/// One rollout: a deal after a candidate move, finished by the network for both sides.
struct Rollout {
  lc::State s;
  Rng rng;
  std::size_t decision;
  std::size_t candidate;
  int steps;
  int me = 0;      // the decider
  int reply = -1;  // reply=M: the rank of the opponent's first move in this copy (−1: sampled as every move)
  /// The value network's estimate of the final return of the player to move at `s` (score
  /// points), when the rollout stopped at its depth before the end; NaN otherwise.
  double leaf = std::nan("");
  /// opp=...: the index of the model that plays the opponent's moves (into SearchOptions::opponent_models)
  /// and its bot, the rollout's own instance (bots are not thread-safe and a scheduler may run
  /// rollouts on several threads); null: the network.
  int model = -1;
  lc::Bot* opp = nullptr;
};

/// nest=K: the search a rollout runs at the decider's first decision after the opponent has moved
/// (SearchOptions::nest_k); its own rollouts do not nest.
struct NestedSearch {
  int k = 0;
  int deals = 0;
  int depth = 0;  // moves before the value leaf (0: to the end or the cap)
  double prior = 0, z = 0, win_reward = 0;
};

/// A finished rollout's value from its decider's seat: the value network's leaf (zero-sum), or
/// the return as it stands, win_shaped by `win_reward`.
double rollout_value(const Rollout& r, double win_reward) {
  return std::isnan(r.leaf) ? win_shaped(r.s.returns(r.me), win_reward) : (r.s.current_player() == r.me ? r.leaf : -r.leaf);
}

Task<void> search_rollout(TraversalContext& ctx, const LostCitiesTraversalGame& game, Rollout& r, int cap, bool sampled,
                          double temp, int depth, double value_scale, const NestedSearch* nest);

/// The nested search at `r`'s state (the decider to move, `probs` its network's probabilities over
/// the `legal` moves): the k most probable moves on `nest.deals` deals resampled from the decider's
/// view (deal j from derive_seed(base, 0, j), its rollouts from derive_seed(base, 1, j) for every
/// move: common random numbers; base drawn from r's stream), each nested rollout awaited in turn on
/// this context (its own frame: the plain rollouts' frames do not hold these states), the choice by
/// search_choice as at the root; returns the move.
Task<int> nested_search_move(TraversalContext& ctx, const LostCitiesTraversalGame& game, Rollout& r, const float* probs,
                             ActionMask legal, int cap, bool sampled, double temp, double value_scale, const NestedSearch& nest) {
  std::array<int, kMaxSearchCandidates> cand{};
  const int k = search_candidates(probs, legal, nest.k, cand);
  if (k < 2) co_return cand[0];
  SearchTally tally;
  std::array<double, kMaxSearchCandidates> values{};
  const std::uint64_t base = r.rng();
  for (int j = 0; j < nest.deals; ++j) {
    lc::State deal = r.s;
    Rng deal_rng(derive_seed(base, 0, static_cast<std::uint64_t>(j)));
    deal.resample_hidden(r.me, deal_rng);
    for (int c = 0; c < k; ++c) {
      Rollout sub{deal, Rng(derive_seed(base, 1, static_cast<std::uint64_t>(j))), r.decision, r.candidate, 0, r.me};
      sub.s.apply_action(cand[static_cast<std::size_t>(c)]);
      co_await search_rollout(ctx, game, sub, cap, sampled, temp, nest.depth, value_scale, nullptr);
      values[static_cast<std::size_t>(c)] = rollout_value(sub, nest.win_reward);
    }
    tally.add_deal(std::span<const double>(values.data(), static_cast<std::size_t>(k)));
  }
  co_return cand[static_cast<std::size_t>(
      search_choice(tally, std::span<const int>(cand.data(), static_cast<std::size_t>(k)), probs, nest.prior, nest.z))];
}

/// Rollout `r` as a coroutine: each move suspends at the network's query (network 0 of the
/// scheduler's set), which the scheduler batches with every other rollout's. With depth > 0 it
/// stops after `depth` moves and queries the value network (network 1) for the state it reached.
/// With `nest` (k > 1) the decider's first decision after the opponent has moved is searched
/// (nested_search_move).
Task<void> search_rollout(TraversalContext& ctx, const LostCitiesTraversalGame& game, Rollout& r, int cap, bool sampled,
                          double temp, int depth, double value_scale, const NestedSearch* nest) {
  const int A = game.num_actions();
  float logits[kMaxTraversalActions];
  float probs[kMaxTraversalActions];
  const int start = r.steps;
  const int stop = depth > 0 ? std::min(cap, depth) : cap;
  bool opponent_moved = false;
  for (; !r.s.is_terminal() && r.steps < stop; ++r.steps) {
    if (r.s.current_player() != r.me) opponent_moved = true;
    if (r.opp != nullptr && r.s.current_player() != r.me) {  // the modelled opponent: no query
      r.s.apply_action(r.opp->choose_action(r.s, r.rng));
      continue;
    }
    const ActionMask legal = r.s.legal_mask();
    float* in = ctx.scratch_input(game.input_width());
    game.encode(r.s, r.s.current_player(), in);
    co_await ctx.query(0, in, legal, logits);
    int a;
    if (nest != nullptr && opponent_moved && r.s.current_player() == r.me) {  // the nested search, once
      masked_softmax(logits, legal, A, probs);
      a = co_await nested_search_move(ctx, game, r, probs, legal, cap - r.steps - 1, sampled, temp, value_scale, *nest);
      nest = nullptr;
    } else if (r.reply >= 0 && r.s.current_player() != r.me) {  // the searched reply: the opponent's r.reply-th best
      std::array<int, kMaxSearchCandidates> ranked{};
      a = ranked[static_cast<std::size_t>(search_candidates(logits, legal, r.reply + 1, ranked) - 1)];
      r.reply = -1;
    } else if (sampled) {
      if (temp != 1.0)
        for (ActionMask m = legal; m != 0; m &= m - 1) logits[std::countr_zero(m)] /= static_cast<float>(temp);
      masked_softmax(logits, legal, A, probs);
      a = sample_action(probs, legal, r.rng);
    } else {
      a = std::countr_zero(legal);
      for (ActionMask m = legal; m != 0; m &= m - 1)
        if (logits[std::countr_zero(m)] > logits[a]) a = std::countr_zero(m);
    }
    r.s.apply_action(a);
  }
  ctx.nodes += r.steps - start;
  if (depth > 0 && r.steps < cap && !r.s.is_terminal()) {
    float* in = ctx.scratch_input(game.input_width());
    game.encode(r.s, r.s.current_player(), in);
    co_await ctx.query(1, in, r.s.legal_mask(), logits);
    r.leaf = static_cast<double>(logits[0]) * value_scale;
  }
}

/// The rollouts leave their results in their Rollout: nothing to collect in index order.
class NoSamples final : public SampleSink {
 public:
  void consume(const TraversalContext&) override {}
};

/// Every forward through `net` with exactly `chunk` rows (zero rows pad the last one): a row's
/// output is then the same whatever else is in the batch, so rollouts do not depend on how a
/// scheduler groups the queries (as network.invariant_chunk does inside the evaluator).
class ChunkedEvaluator final : public Evaluator {
 public:
  ChunkedEvaluator(Evaluator& net, int chunk) : net_(net), chunk_(chunk) {}
  EvaluatorInfo info() const override { return net_.info(); }
  void evaluate(std::span<const float> inputs, std::span<const ActionMask> legal, std::span<float> outputs) override {
    const EvaluatorInfo i = info();
    const std::size_t W = static_cast<std::size_t>(i.input_width), O = static_cast<std::size_t>(i.output_width);
    const std::size_t n = legal.size(), C = static_cast<std::size_t>(chunk_);
    in_.resize(C * W);
    out_.resize(C * O);
    mask_.resize(C);
    for (std::size_t s = 0; s < n; s += C) {
      const std::size_t rows = std::min(C, n - s);
      std::copy_n(inputs.data() + s * W, rows * W, in_.data());
      std::fill(in_.begin() + static_cast<std::ptrdiff_t>(rows * W), in_.end(), 0.0F);
      std::copy_n(legal.data() + s, rows, mask_.data());
      std::fill(mask_.begin() + static_cast<std::ptrdiff_t>(rows), mask_.end(), legal[s]);
      net_.evaluate(in_, mask_, out_);
      std::copy_n(out_.data(), rows * O, outputs.data() + s * O);
    }
  }

 private:
  Evaluator& net_;
  int chunk_;
  std::vector<float> in_, out_;
  std::vector<ActionMask> mask_;
};

class SearchBatchBot final : public lc::BatchBot {
 public:
  SearchBatchBot(CheckpointPolicy policy, SearchOptions o, std::string name)
      : policy_(std::move(policy)),
        chunked_(o.chunk > 0 ? std::make_unique<ChunkedEvaluator>(policy_.strategy(), o.chunk) : nullptr),
        net_(chunked_ ? *chunked_ : policy_.strategy()),
        value_((o.depth > 0 || o.nest_depth > 0) && policy_.value() != nullptr
                   ? (o.chunk > 0 ? std::make_unique<ChunkedEvaluator>(*policy_.value(), o.chunk) : nullptr)
                   : nullptr),
        game_(policy_.game()),
        o_(o),
        name_(std::move(name)),
        scheduler_((register_builtin_schedulers(), make_scheduler(o_.scheduler))) {
    if (o_.sym > 1) {  // the identity, then distinct namings drawn from a fixed stream
      const int C = policy_.config.rules.n_colors;
      std::vector<int> id(static_cast<std::size_t>(C));
      std::iota(id.begin(), id.end(), 0);
      perms_.push_back(id);
      long namings = 1;
      for (int c = 2; c <= C; ++c) namings *= c;
      Rng rng(derive_seed(kSearchStream + 3, 0, 0, 0));
      while (static_cast<long>(perms_.size()) < std::min<long>(o_.sym, namings)) {
        std::vector<int> p = id;
        for (int c = C - 1; c > 0; --c)
          std::swap(p[static_cast<std::size_t>(c)], p[rng.below(static_cast<std::uint32_t>(c + 1))]);
        if (std::find(perms_.begin(), perms_.end(), p) == perms_.end()) perms_.push_back(std::move(p));
      }
    }
    if (o_.ismcts_iters > 0) {
      lc::IsmctsParams ip;
      ip.iters = o_.ismcts_iters;
      if (!o_.rollout_bot.empty()) ip.rollout = o_.rollout_bot;
      ismcts_ = std::make_unique<lc::IsmctsSearch>(policy_.config.rules, std::move(ip));
    } else if (!o_.rollout_bot.empty()) {
      bot_ = lc::make_bot(o_.rollout_bot, policy_.config.rules);  // InputError: unknown bot
    }
    for (const std::string& m : o_.opponent_models)  // one instance each to weigh the models; InputError: unknown bot
      model_bots_.push_back(m == "net" ? nullptr : lc::make_bot(m.substr(4), policy_.config.rules));
    opp_bots_.resize(model_bots_.size());
    model_mass_.assign(model_bots_.size(), 0.0);
  }

  /// Whether the models are weighed (several of them), so that the opponent's moves are recorded.
  bool weighs_models() const noexcept { return model_bots_.size() > 1; }

  std::string_view name() const noexcept override { return name_; }

  // The belief follows each game's moves (the opponent's only; its hand is never read).
  void game_started(int game, int seat, std::uint64_t) override {
    if (o_.belief_turns > 0 || weighs_models()) turns_[game].reset(seat);
  }
  void move_made(int game, const lc::State& before, int action) override {
    if (o_.belief_turns == 0 && !weighs_models()) return;
    const auto it = turns_.find(game);
    if (it != turns_.end()) it->second.record(before, action);
  }
  void game_ended(int game, const lc::State&, int) override { turns_.erase(game); }

  void choose_actions(std::span<const lc::State* const> states, std::span<Rng* const>, std::span<const int> games,
                      std::span<int> actions) override {
    const auto t0 = std::chrono::steady_clock::now();
    const std::size_t n = states.size(), A = static_cast<std::size_t>(game_.num_actions());
    // The network on every decision: its probabilities give the candidates and the prior.
    std::vector<const lc::State*> roots(states.begin(), states.end());
    forward(roots);
    std::vector<std::array<float, kMaxTraversalActions>> prior(n);
    std::vector<std::vector<int>> candidates(n);
    for (std::size_t i = 0; i < n; ++i)
      masked_softmax(out_.data() + i * A, states[i]->legal_mask(), static_cast<int>(A), prior[i].data());
    if (perms_.size() > 1) symmetrize(states, prior);
    for (std::size_t i = 0; i < n; ++i) {
      const ActionMask legal = states[i]->legal_mask();
      std::array<int, kMaxSearchCandidates> ids{};
      const int k = search_candidates(prior[i].data(), legal, o_.top_k, ids);
      candidates[i].assign(ids.begin(), ids.begin() + k);
      actions[i] = candidates[i][0];  // the network's move, unless search finds better
    }
    if (ismcts_) {  // information-set MCTS from the network's prior instead
      for (std::size_t i = 0; i < n; ++i) {
        if (std::popcount(states[i]->legal_mask()) < 2) continue;
        Rng rng(derive_seed(kSearchStream + 2, static_cast<std::uint64_t>(games[i]),
                            static_cast<std::uint64_t>(states[i]->move_count())));
        actions[i] = ismcts_->decide(*states[i], rng, prior[i].data(), o_.ismcts_weight);
        if (actions[i] != candidates[i][0]) ++overrides_;
        ++searched_;
      }
      decisions_ += static_cast<long>(n);
      seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      return;
    }
    if (o_.sims > 0) {  // a tree over the turn instead
      tree_search(states, games, prior, candidates, actions);
      decisions_ += static_cast<long>(n);
      seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      return;
    }
    // Rollouts: each candidate of each decision on the same deals.
    std::vector<Rollout> rolls;
    for (std::size_t i = 0; i < n; ++i) {
      if (candidates[i].size() < 2) continue;
      const int me = states[i]->current_player();
      const auto g = static_cast<std::uint64_t>(games[i]), m = static_cast<std::uint64_t>(states[i]->move_count());
      const std::vector<int> drawn = deal_indices(*states[i], games[i]);
      const std::vector<int> models = deal_models(*states[i], games[i], drawn);
      for (int j = 0; j < o_.deals; ++j) {
        lc::State deal = *states[i];
        Rng deal_rng(derive_seed(kSearchStream, g, m, static_cast<std::uint64_t>(drawn[static_cast<std::size_t>(j)])));
        if (o_.peek == 1) {  // a diagnostic that cheats: the opponent's real hand, the deck resampled
          std::array<lc::Card, lc::kMaxHandSize> hand{};
          std::size_t h = 0;
          for (int slot = 0; slot < deal.hand_size(1 - me); ++slot)
            if (!deal.hand_card_known(1 - me, slot)) hand[h++] = deal.hand_card(1 - me, slot);
          deal.resample_hidden(me, deal_rng);
          deal.set_unknown_hand(1 - me, std::span<const lc::Card>(hand.data(), h));
        } else if (o_.peek == 0) {
          deal.resample_hidden(me, deal_rng);
        }  // peek=2: the real deal, the deck's order too
        for (std::size_t c = 0; c < candidates[i].size(); ++c)
          for (int reply = 0; reply < o_.replies; ++reply) {  // copies of one (candidate, deal) side by side
            Rollout r{deal,
                      Rng(derive_seed(kSearchStream + 1, g, m, static_cast<std::uint64_t>(j))),
                      i,
                      c,
                      0,
                      me,
                      o_.replies > 1 ? reply : -1};
            r.model = models[static_cast<std::size_t>(j)];
            r.s.apply_action(candidates[i][c]);
            rolls.push_back(std::move(r));
          }
      }
    }
    run_rollouts(rolls);
    // Values: the final score difference from the decider's seat (win_shaped by win=W, else by the
    // checkpoint's mmd.win_reward, as its value leaves are; with reply=M, the least of a
    // (candidate, deal)'s M copies), tallied deal by deal for the prior bonus and the paired test.
    // The rollouts lie decision by decision, deal by deal, candidate by candidate, copy by copy.
    std::vector<SearchTally> tally(n);
    const auto M = static_cast<std::size_t>(o_.replies);
    std::array<double, kMaxSearchCandidates> deal_values{};
    const double win_reward = std::isnan(o_.win) ? policy_.win_reward() : o_.win;
    for (std::size_t t = 0; t < rolls.size(); t += M) {
      double v = 1e300;
      for (std::size_t i = t; i < t + M; ++i) {
        const Rollout& r = rolls[i];
        v = std::min(v, rollout_value(r, win_reward));
      }
      const std::size_t d = rolls[t].decision, c = rolls[t].candidate, k = candidates[d].size();
      deal_values[c] = v;
      if (c + 1 == k) tally[d].add_deal(std::span<const double>(deal_values.data(), k));
    }
    for (std::size_t i = 0; i < n; ++i) {
      if (candidates[i].size() < 2) continue;
      const auto c = static_cast<std::size_t>(search_choice(tally[i], candidates[i], prior[i].data(), o_.prior, o_.z));
      actions[i] = candidates[i][c];
      if (actions[i] != candidates[i][0]) ++overrides_;
      ++searched_;
    }
    decisions_ += static_cast<long>(n);
    rollouts_ += static_cast<long>(rolls.size());
    seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }

  void match_ended() override {
    turns_.clear();
    if (decisions_ == 0) return;
    std::cerr << fmt::format(
        "{}: {} decisions ({} searched, {} overriding the network): {:.1f} rollouts, {:.0f} rollout moves, "
        "{:.2f} ms per decision; {} forwards\n",
        name_, decisions_, searched_, overrides_, static_cast<double>(rollouts_) / decisions_,
        static_cast<double>(rollout_moves_) / decisions_, 1e3 * seconds_ / decisions_, forwards_);
    if (tree_nodes_ > 0)
      std::cerr << fmt::format("{}: tree: {:.2f} nodes a searched decision\n", name_,
                               static_cast<double>(tree_nodes_) / static_cast<double>(searched_));
    if (weighed_ > 0)
      std::cerr << fmt::format(
          "{}: belief over {} decisions: {:.1f} past opponent decisions a deal, effective pool {:.1f} of {}, mean exponent "
          "{:.3f}\n",
          name_, weighed_, static_cast<double>(past_rows_) / static_cast<double>(weighed_ * pool_size()),
          ess_ / static_cast<double>(weighed_), pool_size(), beta_sum_ / static_cast<double>(weighed_));
    if (models_weighed_ > 0) {
      std::string shares;
      for (std::size_t t = 0; t < model_mass_.size(); ++t)
        shares += fmt::format("{}{} {:.3f}", t == 0 ? "" : ", ", o_.opponent_models[t],
                              model_mass_[t] / static_cast<double>(models_weighed_));
      std::cerr << fmt::format("{}: opponent models over {} decisions (mean posterior): {}\n", name_, models_weighed_, shares);
    }
    std::fill(model_mass_.begin(), model_mass_.end(), 0.0);
    models_weighed_ = 0;
    decisions_ = searched_ = overrides_ = rollouts_ = rollout_moves_ = forwards_ = weighed_ = past_rows_ = tree_nodes_ = 0;
    seconds_ = ess_ = beta_sum_ = 0;
  }

 private:
  /// Finishes every rollout: a bot for both sides, or the network through the scheduler (every
  /// rollout a coroutine, its queries batched; its RNG streams are not used: each rollout draws
  /// from its own, fixed by game, move and deal).
  void run_rollouts(std::vector<Rollout>& rolls) {
    if (bot_) {  // a bot plays both sides: no forwards
      for (Rollout& r : rolls)
        for (; !r.s.is_terminal() && r.steps < o_.rollout_cap; ++r.steps, ++rollout_moves_)
          r.s.apply_action(bot_->choose_action(r.s, r.rng));
    } else if (!rolls.empty()) {
      for (std::size_t i = 0; i < rolls.size(); ++i) {  // a model's bot: one instance a rollout, made once and reused
        const int t = rolls[i].model;
        if (t < 0 || model_bots_[static_cast<std::size_t>(t)] == nullptr) continue;
        auto& bots = opp_bots_[static_cast<std::size_t>(t)];
        while (bots.size() <= i)
          bots.push_back(lc::make_bot(o_.opponent_models[static_cast<std::size_t>(t)].substr(4), policy_.config.rules));
        rolls[i].opp = bots[i].get();
      }
      const NestedSearch nest{.k = o_.nest_k,
                              .deals = o_.nest_deals,
                              .depth = o_.nest_depth < 0 ? o_.depth : o_.nest_depth,
                              .prior = o_.prior,
                              .z = o_.z,
                              .win_reward = std::isnan(o_.win) ? policy_.win_reward() : o_.win};
      TraversalJob job{.iteration = 1,
                       .traverser = 0,
                       .num_traversals = static_cast<int>(rolls.size()),
                       .first_index = 0,
                       .seed = kSearchStream,
                       .input_width = game_.input_width(),
                       .output_width = 1,
                       .start = [&](TraversalContext& ctx) {
                         return search_rollout(ctx, game_, rolls[static_cast<std::size_t>(ctx.index)], o_.rollout_cap,
                                               o_.sampled_rollouts, o_.rollout_temp, o_.depth, policy_.value_scale(),
                                               nest.k > 1 ? &nest : nullptr);
                       }};
      Evaluator* value = value_ ? value_.get() : policy_.value();
      Evaluator* nets[] = {&net_, value != nullptr ? value : &net_};
      NoSamples sink;
      const RunStats st = scheduler_->run(job, nets, sink);
      rollout_moves_ += st.nodes;
      forwards_ += st.batch.forwards;
    }
  }

  /// sims=S: a tree over each decider's turn (engine/traversal/turn_tree.h): sequential halving
  /// over its `candidates` at the root (S/⌈log2 k⌉ simulations a round, at least one a move). Deal j of a root move is resampled
  /// from derive_seed(kSearchStream, g, m, j) and its rollout draws from derive_seed(kSearchStream
  /// + 1, g, m, j), as the flat search's deal j: root moves compare on common deals. Each round runs
  /// in waves of `wave` simulations a decision, deal by deal; a wave selects in a fixed order,
  /// expands the nodes it reached with one forward, runs its rollouts through the scheduler and
  /// backs up in the same order, so the choice depends only on the decision (and, with chunk=N, on
  /// no scheduler).
  void tree_search(std::span<const lc::State* const> states, std::span<const int> games,
                   const std::vector<std::array<float, kMaxTraversalActions>>& prior,
                   const std::vector<std::vector<int>>& candidates, std::span<int> actions) {
    struct Sim {
      std::size_t decision;
      int deal = 0;
      int len = 0;
      std::array<TurnEdge, kMaxTurnDepth> path{};
      std::uint64_t key = 0;  // the node to expand (path's last edge), with expand
      bool expand = false;
    };
    const std::size_t n = states.size(), W = static_cast<std::size_t>(game_.input_width());
    const int A = game_.num_actions();
    const double win_reward = std::isnan(o_.win) ? policy_.win_reward() : o_.win;
    key_in_.resize(W);
    auto key = [&](const lc::State& s, int me) {
      game_.encode(s, me, key_in_.data());
      return encoding_key(key_in_);
    };
    if (trees_.size() < n) trees_.resize(n);
    std::vector<std::vector<int>> in(n);  // per decision, the root moves still in
    std::vector<int> rounds_of(n, 0);     // per decision, ⌈log2 k⌉
    int rounds = 0;
    for (std::size_t i = 0; i < n; ++i) {
      if (candidates[i].size() < 2) continue;
      in[i] = candidates[i];
      trees_[i].reset(key(*states[i], states[i]->current_player()), states[i]->legal_mask(), prior[i].data());
      rounds_of[i] = static_cast<int>(std::bit_width(candidates[i].size() - 1));
      rounds = std::max(rounds, rounds_of[i]);
    }
    std::vector<Sim> sims;
    std::vector<Rollout> rolls;
    std::vector<const lc::State*> grow;
    std::vector<std::size_t> grow_sim;
    std::array<float, kMaxTraversalActions> probs{};
    for (int round = 0; round < rounds; ++round) {
      // This round's schedule per decision: deal by deal, each move still in.
      std::vector<int> per_move(n, 0);
      int longest = 0;
      for (std::size_t i = 0; i < n; ++i)
        if (in[i].size() > 1) {
          per_move[i] = std::max(1, o_.sims / rounds_of[i] / static_cast<int>(in[i].size()));
          longest = std::max(longest, per_move[i] * static_cast<int>(in[i].size()));
        }
      for (int from = 0; from < longest; from += o_.wave) {
        sims.clear();
        rolls.clear();
        for (std::size_t i = 0; i < n; ++i) {
          const int total = per_move[i] * static_cast<int>(in[i].size());
          if (from >= total) continue;
          TurnTree& tree = trees_[i];
          const int me = states[i]->current_player();
          const auto g = static_cast<std::uint64_t>(games[i]), m = static_cast<std::uint64_t>(states[i]->move_count());
          for (int t = from; t < std::min(total, from + o_.wave); ++t) {
            Sim sim{.decision = i};
            int node = 0, a = in[i][static_cast<std::size_t>(t) % in[i].size()];
            sim.deal = tree.take_root(a);
            lc::State s = *states[i];
            Rng deal_rng(derive_seed(kSearchStream, g, m, static_cast<std::uint64_t>(sim.deal)));
            s.resample_hidden(me, deal_rng);
            for (;;) {
              sim.path[static_cast<std::size_t>(sim.len++)] = {node, a};
              s.apply_action(a);
              if (s.is_terminal() || s.current_player() != me || sim.len == o_.turn_depth) break;
              const std::uint64_t k = key(s, me);
              const int next = tree.child(node, a, k);
              if (next == kNoNode) {
                sim.expand = !tree.has_child(node, a);
                sim.key = k;
                break;
              }
              node = next;
              a = tree.select(node, o_.puct);
            }
            rolls.push_back(Rollout{std::move(s), Rng(derive_seed(kSearchStream + 1, g, m, static_cast<std::uint64_t>(sim.deal))),
                                    i, sims.size(), 0, me});
            sims.push_back(sim);
          }
        }
        // The nodes this wave reached, expanded with the network's probabilities there.
        grow.clear();
        grow_sim.clear();
        for (std::size_t t = 0; t < sims.size(); ++t)
          if (sims[t].expand) {
            grow.push_back(&rolls[t].s);
            grow_sim.push_back(t);
          }
        if (!grow.empty()) {
          forward(grow);
          for (std::size_t r = 0; r < grow.size(); ++r) {
            const Sim& sim = sims[grow_sim[r]];
            const ActionMask legal = grow[r]->legal_mask();
            probs.fill(0.0F);
            masked_softmax(out_.data() + r * static_cast<std::size_t>(A), legal, A, probs.data());
            const TurnEdge& last = sim.path[static_cast<std::size_t>(sim.len - 1)];
            trees_[sim.decision].expand(last.node, last.action, sim.key, legal, probs.data());
          }
        }
        run_rollouts(rolls);
        for (std::size_t t = 0; t < sims.size(); ++t)
          trees_[sims[t].decision].backup(std::span<const TurnEdge>(sims[t].path.data(), static_cast<std::size_t>(sims[t].len)),
                                          sims[t].deal, rollout_value(rolls[t], win_reward));
        rollouts_ += static_cast<long>(rolls.size());
      }
      for (std::size_t i = 0; i < n; ++i)
        if (in[i].size() > 1) trees_[i].halve(in[i]);
    }
    for (std::size_t i = 0; i < n; ++i) {
      if (candidates[i].size() < 2) continue;
      const int first = candidates[i][0];  // the network's most probable move
      actions[i] = trees_[i].choose(in[i][0], first, o_.z);
      if (actions[i] != first) ++overrides_;
      ++searched_;
      tree_nodes_ += trees_[i].size();
    }
  }

  void forward(const std::vector<const lc::State*>& states) { forward_states(net_, game_, states, in_, out_, legal_); }

  /// sym=K: each decision's prior becomes the mean of the network's probabilities over the state
  /// under the K colour namings of perms_ (the identity first), each mapped back to this naming
  /// (card actions name hand slots and stay; pile c's draw is pile to[c]'s under `to`).
  void symmetrize(std::span<const lc::State* const> states, std::vector<std::array<float, kMaxTraversalActions>>& prior) {
    const std::size_t n = states.size(), A = static_cast<std::size_t>(game_.num_actions()), K = perms_.size();
    const int D = policy_.config.rules.draw_deck_action();
    sym_states_.clear();
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t k = 1; k < K; ++k) {
        sym_states_.push_back(*states[i]);
        sym_states_.back().permute_colors(perms_[k]);
      }
    std::vector<const lc::State*> ptrs;
    ptrs.reserve(sym_states_.size());
    for (const lc::State& t : sym_states_) ptrs.push_back(&t);
    forward(ptrs);
    std::array<float, kMaxTraversalActions> probs{};
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t k = 1; k < K; ++k) {
        const std::size_t row = i * (K - 1) + (k - 1);
        masked_softmax(out_.data() + row * A, sym_states_[row].legal_mask(), static_cast<int>(A), probs.data());
        for (std::size_t a = 0; a < A; ++a) {
          const int b = static_cast<int>(a) > D ? D + 1 + perms_[k][a - static_cast<std::size_t>(D) - 1] : static_cast<int>(a);
          prior[i][a] += probs[static_cast<std::size_t>(b)];
        }
      }
      for (std::size_t a = 0; a < A; ++a) prior[i][a] /= static_cast<float>(K);
    }
  }

  int pool_size() const noexcept { return o_.pool > 0 ? o_.pool : 4 * o_.deals; }

  /// The opponent's last `max_moves` recorded moves rebuilt on each deal of `root` drawn from the
  /// streams `streams` (deal j: derive_seed(kSearchStream, g, m, streams[j]); its history's unknown
  /// draws from derive_seed(history_stream, g, m, streams[j])), into past_states_, seen_ and
  /// owner_ (j); false when the deals do not continue the recorded moves (not this game's).
  bool rebuild_histories(const lc::State& root, int game, const lc::OpponentTurns& turns, std::span<const int> streams,
                         std::uint64_t history_stream, int max_moves) {
    const int me = root.current_player();
    const auto g = static_cast<std::uint64_t>(game), mv = static_cast<std::uint64_t>(root.move_count());
    past_states_.clear();
    seen_.clear();
    owner_.clear();
    for (std::size_t j = 0; j < streams.size(); ++j) {
      lc::State deal = root;
      const auto stream = static_cast<std::uint64_t>(streams[j]);
      Rng deal_rng(derive_seed(kSearchStream, g, mv, stream));
      deal.resample_hidden(me, deal_rng);
      Rng history_rng(derive_seed(history_stream, g, mv, stream));
      if (!turns.rebuild(deal, max_moves, history_rng, past_)) return false;
      for (lc::PastDecision& d : past_) {
        past_states_.push_back(std::move(d.state));
        seen_.push_back(d.seen);
        owner_.push_back(j);
      }
    }
    return true;
  }

  /// Adds to ll[j] the log of the network's probability of the moves seen at each decision that
  /// rebuild_histories rebuilt on deal j, divided by `temp` (one forward for all of them).
  void add_network_log_likelihood(std::span<double> ll, double temp) {
    const int A = game_.num_actions();
    std::vector<const lc::State*> rows;
    rows.reserve(past_states_.size());
    for (const lc::State& s : past_states_) rows.push_back(&s);
    forward(rows);
    float probs[kMaxTraversalActions];
    for (std::size_t r = 0; r < rows.size(); ++r) {
      masked_softmax(out_.data() + r * static_cast<std::size_t>(A), rows[r]->legal_mask(), A, probs);
      double p = 0;
      for (ActionMask m = seen_[r]; m != 0; m &= m - 1) p += probs[std::countr_zero(m)];
      ll[owner_[r]] += std::log(std::max(p, 1e-9)) / temp;
    }
  }

  /// The indices of the deals (their derive_seed(kSearchStream, g, m, j) streams) the search uses
  /// at `root`: 0..n−1, or with belief=L, n resampled from a pool of pool_size() by the likelihood
  /// the network gives the opponent's last L turns in each (systematic resampling).
  std::vector<int> deal_indices(const lc::State& root, int game) {
    std::vector<int> ids(static_cast<std::size_t>(o_.deals));
    for (int j = 0; j < o_.deals; ++j) ids[static_cast<std::size_t>(j)] = j;
    const auto it = turns_.find(game);
    if (o_.belief_turns == 0 || it == turns_.end() || it->second.moves() == 0) return ids;
    const int M = pool_size();
    const auto g = static_cast<std::uint64_t>(game), mv = static_cast<std::uint64_t>(root.move_count());
    std::vector<int> pool(static_cast<std::size_t>(M));
    std::iota(pool.begin(), pool.end(), 0);
    if (!rebuild_histories(root, game, it->second, pool, kSearchStream + 2, 2 * o_.belief_turns)) return ids;
    std::vector<double> ll(static_cast<std::size_t>(M), 0.0);
    add_network_log_likelihood(ll, o_.belief_temp);
    // Weights exp(β·ll), β ≤ 1 the largest that keeps the effective pool at ess=F of it (β = 1
    // without ess; bisection), then systematic resampling of n deals from the pool.
    const double top = *std::max_element(ll.begin(), ll.end());
    std::vector<double> w(ll.size());
    double sum = 0, sum2 = 0;
    auto weigh = [&](double beta) {
      sum = sum2 = 0;
      for (std::size_t j = 0; j < w.size(); ++j) {
        w[j] = std::exp(beta * (ll[j] - top));
        sum += w[j];
        sum2 += w[j] * w[j];
      }
      return sum * sum / sum2;
    };
    double beta = 1.0;
    if (weigh(beta) < o_.belief_ess * M) {
      double lo = 0, hi = 1;
      for (int halving = 0; halving < 30; ++halving) ((weigh(0.5 * (lo + hi)) >= o_.belief_ess * M) ? lo : hi) = 0.5 * (lo + hi);
      beta = lo;
      weigh(beta);
    }
    beta_sum_ += beta;
    Rng pick(derive_seed(kSearchStream + 3, g, mv, 0));
    const double step = sum / o_.deals;
    double u = step * (static_cast<double>(pick.below(1U << 30)) / static_cast<double>(1U << 30)), acc = 0;
    std::size_t j = 0;
    for (int k = 0; k < o_.deals; ++k, u += step) {
      while (j + 1 < w.size() && acc + w[j] <= u) acc += w[j++];
      ids[static_cast<std::size_t>(k)] = static_cast<int>(j);
    }
    ++weighed_;
    past_rows_ += static_cast<long>(past_states_.size());
    ess_ += sum * sum / sum2;
    return ids;
  }

  /// opp=...: the model (an index into o_.opponent_models; a model whose bot is null is the
  /// network) that plays the opponent on each of the decision's deals, `drawn` their streams (the
  /// deal_indices). One model: that one on every deal. Several: each model's likelihood of the
  /// opponent's last `hist` turns, rebuilt on each deal (lc::OpponentTurns, stream kSearchStream +
  /// 4; a bot's move is the one seen with probability 1 − eps), averaged over the deals, gives the
  /// posterior (uniform prior; uniform before the opponent has moved), and deal j plays the model
  /// whose share of [0, 1) in the posterior's order holds (j + 1/2)/n: the deals are split among
  /// the models as the posterior says, the same split for every candidate.
  std::vector<int> deal_models(const lc::State& root, int game, const std::vector<int>& drawn) {
    const std::size_t T = model_bots_.size(), D = drawn.size();
    std::vector<int> models(D, T == 0 ? -1 : 0);
    if (T <= 1) return models;
    std::vector<double> post(T, 1.0 / static_cast<double>(T));
    const auto it = turns_.find(game);
    if (it != turns_.end() && it->second.moves() > 0 && weigh_models(root, game, it->second, drawn, post)) {
      for (std::size_t t = 0; t < T; ++t) model_mass_[t] += post[t];
      ++models_weighed_;
    }
    double acc = 0;
    std::size_t t = 0;
    for (std::size_t j = 0; j < D; ++j) {
      const double u = (static_cast<double>(j) + 0.5) / static_cast<double>(D);
      while (t + 1 < T && acc + post[t] <= u) acc += post[t++];
      models[j] = static_cast<int>(t);
    }
    return models;
  }

  /// The posterior over the models given the opponent's last `hist` turns (see deal_models), into
  /// `post`; false (post untouched) when the deals do not continue the recorded moves.
  bool weigh_models(const lc::State& root, int game, const lc::OpponentTurns& turns, const std::vector<int>& drawn,
                    std::vector<double>& post) {
    const std::size_t T = model_bots_.size(), D = drawn.size();
    const auto g = static_cast<std::uint64_t>(game), mv = static_cast<std::uint64_t>(root.move_count());
    if (!rebuild_histories(root, game, turns, drawn, kSearchStream + 4, 2 * o_.model_turns)) return false;
    std::vector<double> ll(T * D, 0.0);  // model t, deal j at t·D + j
    for (std::size_t t = 0; t < T; ++t) {
      if (model_bots_[t] == nullptr) {  // the network: its probability of what was seen
        add_network_log_likelihood(std::span<double>(ll).subspan(t * D, D), 1.0);
      } else {  // a bot: the share of its choices that make the move seen (one choice if it is
                // deterministic, kBotDraws draws if not), weighed 1 − eps, eps spread over the legal moves
        lc::Bot& bot = *model_bots_[t];
        const int draws = bot.deterministic() ? 1 : kBotDraws;
        for (std::size_t r = 0; r < past_states_.size(); ++r) {
          const lc::State& st = past_states_[r];
          Rng bot_rng(derive_seed(kSearchStream + 5, g, mv, r));
          int hits = 0;
          for (int k = 0; k < draws; ++k) hits += static_cast<int>((seen_[r] >> bot.choose_action(st, bot_rng)) & 1U);
          const double spread = static_cast<double>(std::popcount(seen_[r])) / std::popcount(st.legal_mask());
          const double p = (1.0 - o_.model_noise) * hits / draws + o_.model_noise * spread;
          ll[t * D + owner_[r]] += std::log(p);
        }
      }
    }
    // A model's likelihood: the mean over the deals of exp(ll) (log-sum-exp), then normalised.
    std::vector<double> lse(T);
    for (std::size_t t = 0; t < T; ++t) {
      const double top = *std::max_element(ll.begin() + static_cast<std::ptrdiff_t>(t * D),
                                           ll.begin() + static_cast<std::ptrdiff_t>((t + 1) * D));
      double sum = 0;
      for (std::size_t j = 0; j < D; ++j) sum += std::exp(ll[t * D + j] - top);
      lse[t] = top + std::log(sum);
    }
    const double top = *std::max_element(lse.begin(), lse.end());
    double sum = 0;
    for (std::size_t t = 0; t < T; ++t) sum += post[t] = std::exp(lse[t] - top);
    for (double& p : post) p /= sum;
    return true;
  }

  CheckpointPolicy policy_;
  std::unique_ptr<ChunkedEvaluator> chunked_;
  Evaluator& net_;
  std::unique_ptr<ChunkedEvaluator> value_;  // the value network in chunks (chunk=N), else policy_.value()
  const LostCitiesTraversalGame& game_;
  SearchOptions o_;
  std::string name_;
  std::vector<float> in_, out_;
  std::vector<ActionMask> legal_;
  std::unique_ptr<lc::Bot> bot_;
  std::unique_ptr<lc::IsmctsSearch> ismcts_;  // ismcts=N
  std::vector<std::vector<int>> perms_;       // sym=K: the colour namings the prior averages over (the identity first)
  std::vector<lc::State> sym_states_;
  std::vector<std::unique_ptr<lc::Bot>> model_bots_;             // opp=...: one a model (null: the network)
  std::vector<std::vector<std::unique_ptr<lc::Bot>>> opp_bots_;  // per model, one a rollout in flight
  std::vector<double> model_mass_;                               // per model, the posterior summed over weighed decisions
  long models_weighed_ = 0;
  std::unique_ptr<Scheduler> scheduler_;
  std::unordered_map<int, lc::OpponentTurns> turns_;  // per live game, with belief=L
  std::vector<TurnTree> trees_;                       // sims=S: one per pending decision (reused)
  std::vector<float> key_in_;                         // an information state's encoding, for its key
  long tree_nodes_ = 0;
  std::vector<lc::PastDecision> past_;  // one deal's rebuilt history (reused)
  std::vector<lc::State> past_states_;  // a decision's pool of rebuilt histories (reused)
  std::vector<ActionMask> seen_;        // per rebuilt decision, the moves seen (reused)
  std::vector<std::size_t> owner_;      // per rebuilt decision, its deal (reused)
  long weighed_ = 0, past_rows_ = 0;
  double ess_ = 0, beta_sum_ = 0;
  long decisions_ = 0, searched_ = 0, overrides_ = 0, rollouts_ = 0, rollout_moves_ = 0, forwards_ = 0;
  double seconds_ = 0;
};

}  // namespace

std::unique_ptr<lc::BatchBot> make_search_player(const std::string& spec, const lc::Rules& rules) {
  std::string path;
  const SearchOptions o = parse_search_spec(spec, path);
  CheckpointPolicy p = load_checkpoint_policy(path);
  if (p.config.run.game != "lost_cities")
    throw InputError(fmt::format("search:{}: a {} checkpoint cannot play Lost Cities", path, p.config.run.game));
  if (!(p.config.rules == rules)) throw InputError(fmt::format("search:{}: the checkpoint was trained with other rules", path));
  if (o.depth > 0 && o.rollout_bot.empty() && p.value() == nullptr)
    throw InputError(
        fmt::format("search:{}: depth={} needs the checkpoint's value network: an MMD run's checkpoint whose value "
                    "network reads the information state, or a model exported with one (cfr-export --value-from; without it "
                    "a model has none, nor has another algorithm's checkpoint; one "
                    "trained with mmd.value_input = 'full' or 'world' reads the opponent's hand, which a search cannot know)",
                    path, o.depth));
  if (o.replies > 1 && !o.rollout_bot.empty())
    throw InputError(fmt::format("search:{}: reply={} with rollout=bot:{}: the replies are ranked by the network", path,
                                 o.replies, o.rollout_bot));
  if (o.depth > 0 && !o.rollout_bot.empty())
    throw InputError(
        fmt::format("search:{}: depth={} with rollout=bot:{}: a bot's rollouts play to the end", path, o.depth, o.rollout_bot));
  if (!o.opponent_models.empty() && (!o.rollout_bot.empty() || o.replies > 1 || o.sims > 0 || o.peek > 0))
    throw InputError(
        fmt::format("search:{}: opp with {}: opponent models belong to the flat search with the network's "
                    "rollouts",
                    path,
                    o.replies > 1 ? "reply"
                    : o.sims > 0  ? "sims"
                    : o.peek > 0  ? "peek"
                                  : "rollout=bot"));
  if (o.nest_k > 1 && (!o.rollout_bot.empty() || o.replies > 1 || o.sims > 0 || !o.opponent_models.empty()))
    throw InputError(
        fmt::format("search:{}: nest={} with {}: the nested search belongs to the flat search with the network's "
                    "rollouts",
                    path, o.nest_k,
                    o.replies > 1                ? "reply"
                    : o.sims > 0                 ? "sims"
                    : !o.opponent_models.empty() ? "opp"
                                                 : "rollout=bot"));
  if (o.nest_k > 1 && o.nest_depth > 0 && p.value() == nullptr)
    throw InputError(fmt::format(
        "search:{}: nd={} needs the checkpoint's value network (nd=0: the nested rollouts play to the end)", path, o.nest_depth));
  if (o.rollout_temp != 1.0 && !o.sampled_rollouts)
    throw InputError(
        fmt::format("search:{}: rtemp={} needs sampled rollouts (rollout=sampled, the default)", path, o.rollout_temp));
  if (o.sims > 0 && (o.belief_turns > 0 || o.replies > 1 || o.peek > 0 || !o.rollout_bot.empty()))
    throw InputError(fmt::format("search:{}: sims={} (the tree over the turn) with {}: that key belongs to the flat search", path,
                                 o.sims,
                                 o.belief_turns > 0 ? "belief"
                                 : o.replies > 1    ? "reply"
                                 : o.peek > 0       ? "peek"
                                                    : "rollout=bot"));
  if (o.ismcts_iters > 0) {
    const char* other = o.sims > 0                   ? "sims"
                        : o.nest_k > 1               ? "nest"
                        : !o.opponent_models.empty() ? "opp"
                        : o.replies > 1              ? "reply"
                        : o.belief_turns > 0         ? "belief"
                        : o.peek > 0                 ? "peek"
                        : o.depth > 0                ? "depth"
                                                     : nullptr;
    if (other != nullptr)
      throw InputError(
          fmt::format("search:{}: ismcts={} with {}: that key belongs to the network's rollouts", path, o.ismcts_iters, other));
    if (!o.rollout_bot.empty() && lc::names_ismcts(o.rollout_bot))
      throw InputError(fmt::format("search:{}: rollout=bot:{}: ismcts's rollouts are a rule bot's", path, o.rollout_bot));
  }
  return std::make_unique<SearchBatchBot>(std::move(p), o, "search:" + spec);  // named as given, like checkpoint:PATH
}

}  // namespace cfr
