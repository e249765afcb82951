// MMD's rollouts (engine/traversal/mmd.h) with stand-in networks on Kuhn: the value targets of
// mmd.critic_deviation, the moves off π that show a fixed policy's critic the states a search's
// candidates lead to, stay π's (every trace stops at a deviation and bootstraps from V there);
// the search teacher's "overrides" target is its improved target where the search overrode π.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <memory>

#include "engine/games/kuhn.h"
#include "engine/traversal/mmd.h"
#include "tests/sched/helpers.h"

using namespace cfr;
using namespace cfr::testing;

namespace {

/// The value network's stand-in: `value` for every row.
class ConstantEvaluator final : public Evaluator {
 public:
  ConstantEvaluator(int input_width, float value) : info_{input_width, 1, 1, kMaxEvaluatorBatch}, value_(value) {}
  EvaluatorInfo info() const override { return info_; }
  void evaluate(std::span<const float>, std::span<const ActionMask>, std::span<float> outputs) override {
    std::fill(outputs.begin(), outputs.end(), value_);
  }

 private:
  EvaluatorInfo info_;
  float value_;
};

/// Kuhn self-play rollouts (uniform π, V ≡ `value`, λ = 1, reward scale 1) with `deviation`:
/// their samples (inputs, masks, targets) in index order.
SampleBuffer kuhn_samples(double deviation, float value, int rollouts, const std::string& scheduler = "interleaved",
                          MmdSearchTeacher* teacher = nullptr, double win_reward = 0) {
  register_builtin_schedulers();
  const SmallTraversalGame<kuhn::State> game;
  const int W = game.input_width(), A = game.num_actions();
  UniformEvaluator policy(W, A), magnet(W, A), opponent(W, A);
  ConstantEvaluator v(W, value);
  Evaluator* nets[kNumMmdNets] = {&policy, &v, &magnet, &opponent};
  MmdRolloutOptions o;
  o.gae_lambda = 1.0;
  o.win_reward = win_reward;
  o.magnet = false;
  o.deviation = deviation;
  o.deviation_k = 2;
  o.teacher = teacher;
  TraversalJob job{.iteration = 1,
                   .traverser = 0,
                   .num_traversals = rollouts,
                   .seed = 17,
                   .input_width = W,
                   .output_width = mmd_target_width(A),
                   .start = [&](TraversalContext& ctx) { return mmd_rollout(ctx, game, o); }};
  CollectingSink sink(W, mmd_target_width(A));
  make_scheduler(scheduler, declared_options(scheduler, SchedulerOptions({{"window", 8}, {"threads", 2}})))->run(job, nets, sink);
  return sink.advantage;
}

/// Every sample's (value target, advantage at the taken action).
std::vector<std::pair<float, float>> kuhn_targets(double deviation, float value, int rollouts, double win_reward = 0) {
  const SampleBuffer samples = kuhn_samples(deviation, value, rollouts, "interleaved", nullptr, win_reward);
  const int A = SmallTraversalGame<kuhn::State>().num_actions();
  std::vector<std::pair<float, float>> out;
  for (int i = 0; i < samples.size(); ++i) {
    const float* t = samples.target(i);
    float advantage = 0;
    for (int a = 0; a < A; ++a) advantage += t[a];  // only the taken action's entry is set
    out.emplace_back(t[4 * A], advantage);
  }
  return out;
}

bool near(float a, double b) { return std::abs(static_cast<double>(a) - b) < 1e-5; }
bool is_return(float t) { return near(t, 1) || near(t, -1) || near(t, 2) || near(t, -2); }

}  // namespace

TEST_CASE("MMD win reward: a won game's return gains win_reward and a lost one's loses it") {
  // λ = 1: every value target is the decider's return, ±1 or ±2 in Kuhn, shaped to ±1.5 or ±2.5;
  // the same rollouts (same streams), so the plain and the shaped targets pair up one to one.
  const auto plain = kuhn_targets(0.0, 0.25F, 64), shaped = kuhn_targets(0.0, 0.25F, 64, 0.5);
  REQUIRE(plain.size() == shaped.size());
  REQUIRE(plain.size() >= 128);
  int won = 0, lost = 0;
  for (std::size_t i = 0; i < plain.size(); ++i) {
    const float r = plain[i].first;
    REQUIRE(is_return(r));
    CHECK(near(shaped[i].first, r + (r > 0 ? 0.5 : -0.5)));
    CHECK(near(shaped[i].second, shaped[i].first - 0.25));  // the advantage: the target minus V
    won += r > 0;
    lost += r < 0;
  }
  CHECK(won > 0);
  CHECK(lost > 0);
}

TEST_CASE("MMD critic deviations: a move off the policy keeps V as its value target and advantage 0") {
  const auto targets = kuhn_targets(1.0, 0.25F, 64);
  REQUIRE(targets.size() >= 128);  // two or three decisions a game
  for (const auto& [value, advantage] : targets) {
    CHECK(near(value, 0.25));
    CHECK(near(advantage, 0.0));
  }
}

TEST_CASE("MMD critic deviations: the traces of both players stop at a deviation and bootstrap from V there") {
  // Without deviations (λ = 1) every value target is the game's return; with them a decision
  // followed by its own player's deviation gets +V, by the other player's −V (zero-sum), and a
  // decision with no deviation after it still the return. V = 0.25 is no Kuhn return.
  for (const auto& [value, advantage] : kuhn_targets(0.0, 0.25F, 64)) CHECK(is_return(value));
  const auto targets = kuhn_targets(0.5, 0.25F, 256);
  int own = 0, other = 0, returns = 0;
  for (const auto& [value, advantage] : targets) {
    own += near(value, 0.25);
    other += near(value, -0.25);
    returns += is_return(value);
  }
  CHECK(own + other + returns == static_cast<int>(targets.size()));
  CHECK(other > 0);  // player 0's first decision before player 1's deviation
  CHECK(returns > 0);
  CHECK(own > other);  // every deviation's own sample is +V
}

TEST_CASE("MMD critic deviations: the same samples under every scheduler") {
  const SampleBuffer reference = kuhn_samples(0.3, 0.25F, 96, "recursive");
  REQUIRE(reference.size() >= 192);
  for (const std::string name : {"interleaved", "pooled"}) {
    INFO(name);
    CHECK(same_samples(kuhn_samples(0.3, 0.25F, 96, name), reference));
  }
}

namespace {

/// The search teacher's cloning targets (t[3A, 4A)) of Kuhn rollouts searched at every decision:
/// uniform π, two candidates rolled out to the end on 4 deals, no prior (an override is a lead of
/// the second candidate, action 1, on those deals), the improved target at temperature 1.
std::vector<std::array<float, 2>> kuhn_teacher_targets(bool overrides_only) {
  FixedNets nets({0.0F, 0.0F}, 0.0F);
  MmdSearchTeacher teacher;
  teacher.options = {
      .share = 1.0,
      .settings = {.top_k = 2, .deals = 4, .depth = 0, .cap = 200, .prior = 0, .sampled = true, .value_scale = 1},
      .target = overrides_only ? MmdSearchTeacherOptions::Target::kOverrides : MmdSearchTeacherOptions::Target::kImproved,
      .temperature = 1.0};
  teacher.nets = &nets;
  const SampleBuffer samples = kuhn_samples(0.0, 0.25F, 128, "interleaved", &teacher);
  const int A = SmallTraversalGame<kuhn::State>().num_actions();
  std::vector<std::array<float, 2>> out;
  for (int i = 0; i < samples.size(); ++i) out.push_back({samples.target(i)[3 * A], samples.target(i)[3 * A + 1]});
  return out;
}

}  // namespace

TEST_CASE("MMD search teacher: the overrides target is the improved target where the search overrode and empty elsewhere") {
  const auto improved = kuhn_teacher_targets(false), overrides = kuhn_teacher_targets(true);
  REQUIRE(improved.size() == overrides.size());
  REQUIRE(improved.size() >= 256);
  int overrode = 0, agreed = 0;
  for (std::size_t i = 0; i < improved.size(); ++i) {
    const auto [p0, p1] = improved[i];
    CHECK(near(p0 + p1, 1.0));  // every decision searched: the improved target is a distribution
    if (p1 > p0) {              // the second candidate led: the search overrode π's first (action 0)
      ++overrode;
      CHECK(near(overrides[i][0], p0));
      CHECK(near(overrides[i][1], p1));
    } else {
      ++agreed;
      CHECK(overrides[i][0] == 0.0F);
      CHECK(overrides[i][1] == 0.0F);
    }
  }
  CHECK(overrode > 0);
  CHECK(agreed > 0);
}
