// The traversal math: the coroutine traversal equals a plain recursive implementation of
// deep-cfr.md §2 written independently here, for every option; long trajectories; node caps.
#include <doctest/doctest.h>

#include <cmath>

#include "tests/sched/helpers.h"

using namespace cfr;
using namespace cfr::testing;

namespace {

// Plain recursion, evaluators called directly (batch of one), same RNG stream and draw order.
class ReferenceOutcomeSampling {
 public:
  ReferenceOutcomeSampling(const LostCitiesTraversalGame& g, const TraversalOptions& o, std::span<Evaluator* const> nets,
                           SampleBuffer& adv, SampleBuffer& strat)
      : g_(g), o_(o), nets_(nets), adv_(adv), strat_(strat) {}

  void run(std::uint64_t seed, int iteration, int traverser, int index) {
    rng_.reseed(derive_seed(seed, static_cast<std::uint64_t>(iteration), static_cast<std::uint64_t>(traverser),
                            static_cast<std::uint64_t>(index)));
    it_ = iteration;
    p_ = traverser;
    nodes_ = 0;
    auto s = g_.new_game(rng_);
    (void)visit(s);
  }

 private:
  void eval(int net, const float* in, ActionMask legal, float* out) {
    const int W = g_.input_width(), A = g_.num_actions();
    nets_[static_cast<std::size_t>(net)]->evaluate(std::span<const float>(in, static_cast<std::size_t>(W)),
                                                   std::span<const ActionMask>(&legal, 1),
                                                   std::span<float>(out, static_cast<std::size_t>(A)));
  }

  double visit(lc::State& s) {
    const int A = g_.num_actions();
    if (o_.max_nodes > 0 && nodes_ >= o_.max_nodes) return o_.cutoff == CutoffValue::kScoreDiff ? s.returns(p_) : 0.0;
    if (s.is_terminal()) return s.returns(p_);
    ++nodes_;
    const int p = s.current_player();
    const ActionMask legal = s.legal_mask();
    std::vector<float> in(static_cast<std::size_t>(g_.input_width())), out(static_cast<std::size_t>(A)),
        pr(static_cast<std::size_t>(A));
    g_.encode(s, p, in.data());
    if (p != p_) {
      if (o_.opponent == OpponentPolicy::kAverageStrategy) {
        eval(kStrategyNet, in.data(), legal, out.data());
        masked_softmax(out.data(), legal, A, pr.data());
      } else {
        eval(advantage_net(p), in.data(), legal, out.data());
        regret_matching(out.data(), legal, A, o_.fallback, o_.rm_epsilon, pr.data());
      }
      const int a = sample_action(pr.data(), legal, rng_);
      g_.apply(s, a, rng_);
      return visit(s);
    }
    eval(advantage_net(p), in.data(), legal, out.data());
    std::vector<float> sigma(static_cast<std::size_t>(A));
    regret_matching(out.data(), legal, A, o_.fallback, o_.rm_epsilon, sigma.data());
    const int si = strat_.push(p, it_, legal);
    std::copy(in.begin(), in.end(), strat_.input(si));
    std::copy(sigma.begin(), sigma.end(), strat_.target(si));
    const float unif = 1.0F / static_cast<float>(mask_count(legal));
    for (int b = 0; b < A; ++b)
      pr[static_cast<std::size_t>(b)] =
          mask_has(legal, b) ? static_cast<float>((1.0 - o_.epsilon) * sigma[static_cast<std::size_t>(b)] + o_.epsilon * unif)
                             : 0.0F;
    const int a = sample_action(pr.data(), legal, rng_);
    const int ai = adv_.push(p, it_, legal);
    std::copy(in.begin(), in.end(), adv_.input(ai));
    g_.apply(s, a, rng_);
    const double v = visit(s);
    const double q = std::max(static_cast<double>(pr[static_cast<std::size_t>(a)]), o_.prob_floor);
    double vt = v / q;
    if (o_.value_clip > 0) vt = std::clamp(vt, -o_.value_clip, o_.value_clip);
    const double u = sigma[static_cast<std::size_t>(a)] * vt;
    float* target = adv_.target(ai);
    for (int b = 0; b < A; ++b)
      if (mask_has(legal, b)) target[b] = o_.unsampled == UnsampledRegret::kZero ? 0.0F : static_cast<float>(-u);
    target[a] = static_cast<float>(vt - u);
    return u;
  }

  const LostCitiesTraversalGame& g_;
  const TraversalOptions& o_;
  std::span<Evaluator* const> nets_;
  SampleBuffer& adv_;
  SampleBuffer& strat_;
  Rng rng_;
  int it_ = 0, p_ = 0, nodes_ = 0;
};

void compare_with_reference(const TraversalOptions& opts, int traversals) {
  LostCitiesTraversalGame game;
  const Nets nets = hash_nets(game.input_width(), game.num_actions());
  SampleBuffer adv, strat;
  adv.configure(game.input_width(), game.num_actions());
  strat.configure(game.input_width(), game.num_actions());
  ReferenceOutcomeSampling ref(game, opts, nets.span(), adv, strat);
  for (int i = 0; i < traversals; ++i) ref.run(79, 2, 1, i);
  CollectingSink got(game.input_width(), game.num_actions());
  register_builtin_schedulers();
  make_scheduler("interleaved", {{"window", 16}})->run(make_job(game, opts, traversals, 2, 1), nets.span(), got);
  REQUIRE(adv.size() > 0);
  CHECK(adv.size() == got.advantage.size());
  CHECK(same_samples(got.advantage, adv));
  CHECK(same_samples(got.strategy, strat));
}

// A two-player game that lasts exactly `length` decisions: for trajectories of any length.
struct ChainState {
  int step = 0;
  int length = 0;
  int current_player() const { return step % 2; }
  bool is_terminal() const { return step >= length; }
  ActionMask legal_mask() const { return is_terminal() ? 0 : 0b11; }
  double returns(int p) const { return p == 0 ? 1.0 : -1.0; }
};
struct ChainGame {
  using State = ChainState;
  int length = 1'000'000;
  int num_actions() const { return 2; }
  int input_width() const { return 2; }
  State new_game(Rng&) const { return {0, length}; }
  void encode(const State& s, int p, float* out) const {
    out[0] = static_cast<float>(p);
    out[1] = static_cast<float>(s.step % 7);
  }
  void apply(State& s, int, Rng&) const { ++s.step; }
};

}  // namespace

TEST_CASE("regret matching normalises positive advantages and falls back to argmax or uniform") {
  float sigma[4];
  const float adv[4] = {1.0F, -2.0F, 3.0F, 5.0F};
  regret_matching(adv, 0b0111, 4, RmFallback::kArgmax, 1e-4, sigma);  // action 3 illegal
  CHECK(sigma[0] == doctest::Approx(0.25));
  CHECK(sigma[1] == 0.0F);
  CHECK(sigma[2] == doctest::Approx(0.75));
  CHECK(sigma[3] == 0.0F);
  const float neg[4] = {-1.0F, -0.5F, -3.0F, 9.0F};
  regret_matching(neg, 0b0111, 4, RmFallback::kArgmax, 1e-4, sigma);
  CHECK(sigma[1] == 1.0F);  // the largest legal advantage
  regret_matching(neg, 0b0111, 4, RmFallback::kUniform, 1e-4, sigma);
  CHECK(sigma[0] == doctest::Approx(1.0 / 3));
  const float tiny[2] = {0.00005F, 0.0F};
  regret_matching(tiny, 0b11, 2, RmFallback::kArgmax, 1e-4, sigma);  // sum ≤ ε → fallback
  CHECK(sigma[0] == 1.0F);
  const float ties[3] = {0.0F, 0.0F, 0.0F};
  regret_matching(ties, 0b110, 3, RmFallback::kArgmax, 1e-4, sigma);
  CHECK(sigma[1] == 1.0F);  // ties → lowest legal id
}

TEST_CASE("masked softmax ignores illegal logits") {
  float p[3];
  const float logits[3] = {0.0F, 100.0F, std::log(3.0F)};
  masked_softmax(logits, 0b101, 3, p);
  CHECK(p[1] == 0.0F);
  CHECK(p[0] == doctest::Approx(0.25));
  CHECK(p[2] == doctest::Approx(0.75));
}

TEST_CASE("outcome sampling equals a plain recursive implementation: reference defaults") {
  compare_with_reference(TraversalOptions{}, 30);
}

TEST_CASE("outcome sampling equals the plain implementation with every option changed") {
  compare_with_reference(TraversalOptions{.epsilon = 0.3,
                                          .prob_floor = 0.05,
                                          .value_clip = 20,
                                          .unsampled = UnsampledRegret::kNegativeNodeValue,
                                          .max_nodes = 50,
                                          .cutoff = CutoffValue::kZero,
                                          .opponent = OpponentPolicy::kNetwork,
                                          .fallback = RmFallback::kUniform},
                         30);
  compare_with_reference(TraversalOptions{.value_clip = 0, .max_nodes = 0}, 10);
}

TEST_CASE("the node cap cuts a traversal off at max_nodes non-terminal nodes") {
  LostCitiesTraversalGame game;
  const Nets nets = hash_nets(game.input_width(), game.num_actions());
  register_builtin_schedulers();
  CollectingSink got(game.input_width(), game.num_actions());
  const TraversalOptions opts{.max_nodes = 10};
  make_scheduler("interleaved", {})->run(make_job(game, opts, 20), nets.span(), got);
  CHECK(got.nodes == 200);
}

TEST_CASE("a fixed-bot opponent asks no network") {
  LostCitiesTraversalGame game;
  game.bot = make_bot("heuristic_balanced", game.rules);
  const Nets nets = hash_nets(game.input_width(), game.num_actions());
  register_builtin_schedulers();
  CollectingSink got(game.input_width(), game.num_actions());
  const TraversalOptions opts{.opponent = OpponentPolicy::kBot};
  const RunStats st = make_scheduler("interleaved", {})->run(make_job(game, opts, 20), nets.span(), got);
  CHECK(st.batch.requests == got.strategy.size());  // only traverser nodes query
  CHECK(st.batch.requests < st.nodes);
}

TEST_CASE("every scheduler counts the traversals the node cap cut off") {
  LostCitiesTraversalGame game;
  const Nets nets = hash_nets(game.input_width(), game.num_actions());
  register_builtin_schedulers();
  for (const auto& name : scheduler_names()) {
    CAPTURE(name);
    for (const int cap : {10, 0}) {
      CAPTURE(cap);
      CollectingSink got(game.input_width(), game.num_actions());
      const TraversalOptions opts{.max_nodes = cap};
      const RunStats st = make_scheduler(name, {})->run(make_job(game, opts, 12), nets.span(), got);
      CHECK(st.traversals == 12);
      // A Lost Cities game takes far more than 10 actions; without a cap every game ends.
      CHECK(st.cutoffs == (cap > 0 ? 12 : 0));
    }
  }
}

TEST_CASE("a cut-off traversal can be valued by a bot rollout to the end of the game") {
  LostCitiesTraversalGame game;
  game.bot = make_bot("heuristic_balanced", game.rules);
  const Nets nets = hash_nets(game.input_width(), game.num_actions());
  register_builtin_schedulers();
  auto run = [&](CutoffValue cutoff) {
    CollectingSink got(game.input_width(), game.num_actions());
    const TraversalOptions opts{.max_nodes = 40, .cutoff = cutoff};
    const RunStats st = make_scheduler("interleaved", {})->run(make_job(game, opts, 16), nets.span(), got);
    CHECK(st.cutoffs == 16);
    return got;
  };
  const auto diff = run(CutoffValue::kScoreDiff), rollout = run(CutoffValue::kBotRollout);
  // Same trajectories up to the cap (same inputs), other values (the rollouts' final scores).
  CHECK(diff.advantage.inputs == rollout.advantage.inputs);
  CHECK(diff.advantage.targets != rollout.advantage.targets);
  for (const float t : rollout.advantage.targets) CHECK(std::isfinite(t));
  // A game without bots cannot roll out.
  const SmallTraversalGame<kuhn::State> kuhn_game;
  const Nets small = hash_nets(kuhn_game.input_width(), kuhn_game.num_actions());
  CollectingSink sink(kuhn_game.input_width(), kuhn_game.num_actions());
  const TraversalOptions capped{.max_nodes = 1, .cutoff = CutoffValue::kBotRollout};
  CHECK_THROWS_WITH_AS(make_scheduler("interleaved", {})->run(make_job(kuhn_game, capped, 4), small.span(), sink),
                       doctest::Contains("bot_rollout needs a game with bots"), InputError);
}

TEST_CASE("a 1,000,000-node trajectory runs with the node cap disabled, in constant frame memory") {
  const ChainGame game;
  const Nets nets = uniform_nets(2, 2);
  register_builtin_schedulers();
  CollectingSink got(2, 2);
  const TraversalOptions opts{.max_nodes = 0};
  const RunStats st = make_scheduler("interleaved", {})->run(make_job(game, opts, 1), nets.span(), got);
  CHECK(st.nodes == 1'000'000);
  CHECK(got.strategy.size() == 500'000);
  CHECK(got.advantage.size() == 500'000);
  CHECK(got.arena_high_water < 4096);  // one coroutine frame, whatever the length
}
