// nets/networks.h: evaluator shapes, parameter counts, batch invariance, the two masked losses
// against hand-computed values, and weight publication.
#include <doctest/doctest.h>

#include <atomic>
#include <cmath>
#include <thread>
#include <vector>

#include "engine/core/errors.h"
#include "nets/networks.h"
#include "tests/nets/helpers.h"

using namespace cfr;
using namespace cfr::nets_test;

namespace {

// Training settings whose steps leave the weights unchanged (learning rate 0), so that every
// step's loss is the loss of the starting weights; no clipping.
TrainConfig frozen(int updates, int batch, bool linear = true) {
  return {
      .updates = updates, .batch_size = batch, .learning_rate = 0, .weight_decay = 0, .grad_clip = 0, .linear_weighting = linear};
}

// Every published weight set to 0: every output is 0, whatever the input.
void zero_weights(NetworkSet& nets) {
  const std::vector<float> zeros(static_cast<std::size_t>(nets.total_parameters()), 0.0F);
  nets.set_published_weights(zeros);
}

std::vector<float> row(std::uint64_t seed) { return random_inputs(1, seed); }

}  // namespace

// ---------------------------------------------------------------------------------------------
// Shapes

TEST_CASE("every evaluator gives output_width values per row for batches of 1, 7 and 300") {
  configure_torch_threads(1);
  NetworkSet nets(deep_cfr_specs(), small_config(), 1);
  REQUIRE(nets.size() == kNets);
  for (int net = 0; net < kNets; ++net) {
    CAPTURE(net);
    CHECK(nets.spec(net).input_width == kIn);
    CHECK(nets.spec(net).output_width == kOut);
    const EvaluatorInfo info = nets.evaluator(net).info();
    CHECK(info.input_width == kIn);
    CHECK(info.output_width == kOut);
    for (const int n : {1, 7, 300}) {
      CAPTURE(n);
      const auto x = random_inputs(n, 100 + static_cast<std::uint64_t>(n));
      const auto y = evaluate(nets.evaluator(net), x);
      REQUIRE(y.size() == static_cast<std::size_t>(n * kOut));
      // Every row was written (the NaN sentinels would have been counted and replaced by 0), and
      // row i is input i's output: evaluated alone it gives the same values (up to rounding).
      CHECK(nets.take_nonfinite_outputs(net) == 0);
      for (int i = 0; i < n; i += (n > 10 ? 37 : 1)) {
        const auto alone = evaluate(nets.evaluator(net), std::span(x).subspan(static_cast<std::size_t>(i * kIn), kIn));
        for (int a = 0; a < kOut; ++a)
          CHECK(y[static_cast<std::size_t>(i * kOut + a)] == doctest::Approx(alone[static_cast<std::size_t>(a)]).epsilon(1e-5));
      }
    }
  }
  // The three networks are initialised from different seeds.
  const auto x = random_inputs(3, 5);
  CHECK(!same_bits(evaluate(nets.evaluator(0), x), evaluate(nets.evaluator(1), x)));
  CHECK(!same_bits(evaluate(nets.evaluator(0), x), evaluate(nets.evaluator(2), x)));
}

TEST_CASE("parameters(net) is in·h + h + (L−1)(h·h + h) + h·out + out for an MLP of L hidden layers of h") {
  struct Shape {
    int in, out, h, layers;
  };
  for (const Shape s : {Shape{kIn, kOut, 16, 2}, Shape{3, 2, 5, 1}, Shape{10, 7, 9, 3}, Shape{kIn, kOut, 1, 1}}) {
    CAPTURE(s.in);
    CAPTURE(s.out);
    CAPTURE(s.h);
    CAPTURE(s.layers);
    NetworkSet nets(deep_cfr_specs(s.in, s.out), small_config(0, s.h, s.layers), 1);
    const std::int64_t expected =
        std::int64_t{s.in} * s.h + s.h + std::int64_t{s.layers - 1} * (s.h * s.h + s.h) + s.h * s.out + s.out;
    for (int net = 0; net < kNets; ++net) CHECK(nets.parameters(net) == expected);
    CHECK(nets.total_parameters() == kNets * expected);
    CHECK(nets.published_weights().size() == static_cast<std::size_t>(kNets * expected));
  }
}

TEST_CASE("a set of networks of different widths sizes each one from its spec") {
  configure_torch_threads(1);
  const NetworkSpecs specs = {{.name = "a", .input_width = 3, .output_width = 2, .loss = NetLoss::kMaskedMse},
                              {.name = "b", .input_width = 9, .output_width = 5, .loss = NetLoss::kSoftCrossEntropy},
                              {.name = "c", .input_width = 1, .output_width = 1, .loss = NetLoss::kMaskedMse},
                              {.name = "d", .input_width = 4, .output_width = 64, .loss = NetLoss::kSoftCrossEntropy}};
  NetworkSet nets(specs, small_config(0, 8, 2), 1);
  nets.set_replicas(2);
  REQUIRE(nets.size() == 4);
  std::int64_t total = 0;
  for (int r = 0; r < 2; ++r) CHECK(nets.evaluators(r).size() == 4);
  for (int net = 0; net < nets.size(); ++net) {
    CAPTURE(net);
    const auto& s = specs[static_cast<std::size_t>(net)];
    CHECK(nets.spec(net).name == s.name);
    CHECK(nets.parameters(net) == s.input_width * 8 + 8 + (8 * 8 + 8) + 8 * s.output_width + s.output_width);
    total += nets.parameters(net);
    for (int r = 0; r < 2; ++r) {
      Evaluator& ev = *nets.evaluators(r)[static_cast<std::size_t>(net)];
      CHECK(&ev == &nets.evaluator(net, r));
      CHECK(ev.info().input_width == s.input_width);
      CHECK(ev.info().output_width == s.output_width);
      const auto y = evaluate(ev, random_inputs(7, 3, s.input_width));
      CHECK(y.size() == static_cast<std::size_t>(7 * s.output_width));
    }
  }
  CHECK(nets.total_parameters() == total);
  CHECK(nets.published_weights().size() == static_cast<std::size_t>(total));
}

TEST_CASE("rewire_inputs: the widened network computes what the narrow one did, whatever its new inputs hold") {
  configure_torch_threads(1);
  const NetworkSpecs narrow = {{.name = "p", .input_width = kIn, .output_width = kOut, .loss = NetLoss::kSoftCrossEntropy}};
  NetworkSet a(narrow, small_config(0, kHidden, 3), 5);
  // New inputs at 0, 3 and the end; old input 2 is read at position 4 of 10.
  const std::vector<int> column_of = {-1, 0, 1, -1, 2, 3, 4, 5, -1, -1};
  const auto wide_weights = rewire_inputs(a.published_weights(0), kHidden, kIn, column_of);
  const NetworkSpecs wide = {{.name = "p", .input_width = 10, .output_width = kOut, .loss = NetLoss::kSoftCrossEntropy}};
  NetworkSet b(wide, small_config(0, kHidden, 3), 6);
  REQUIRE(wide_weights.size() == static_cast<std::size_t>(b.parameters(0)));
  b.set_weights(0, wide_weights);
  const int n = 9;
  const auto x = random_inputs(n, 11);
  auto y = random_inputs(n, 12, 10);  // the new inputs hold noise
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < 10; ++j)
      if (column_of[static_cast<std::size_t>(j)] >= 0)
        y[static_cast<std::size_t>(i * 10 + j)] = x[static_cast<std::size_t>(i * kIn + column_of[static_cast<std::size_t>(j)])];
  const auto out_a = evaluate(a.evaluator(0), x), out_b = evaluate(b.evaluator(0), y);
  REQUIRE(out_a.size() == out_b.size());
  for (std::size_t k = 0; k < out_a.size(); ++k) CHECK(out_b[k] == doctest::Approx(out_a[k]).epsilon(1e-5));
  // Bad shapes are refused, not read out of bounds.
  CHECK_THROWS_AS(rewire_inputs(std::vector<float>(10), kHidden, kIn, column_of), InputError);
  CHECK_THROWS_AS(rewire_inputs(a.published_weights(0), kHidden, kIn, std::vector<int>{0, kIn}), InputError);
}

TEST_CASE("grow_mlp: the grown network computes what the small one did and its new units are not dead") {
  configure_torch_threads(1);
  const NetworkSpecs specs = {{.name = "p", .input_width = kIn, .output_width = kOut, .loss = NetLoss::kSoftCrossEntropy}};
  NetworkSet a(specs, small_config(0, kHidden, 2), 5);
  const MlpShape shape{.inputs = kIn, .outputs = kOut, .hidden = kHidden, .layers = 2};
  const auto x = random_inputs(13, 21);
  const auto out_a = evaluate(a.evaluator(0), x);
  for (const auto& [H, L] :
       {std::pair{kHidden, 2}, std::pair{2 * kHidden + 3, 2}, std::pair{kHidden, 4}, std::pair{3 * kHidden, 3}}) {
    CAPTURE(H);
    CAPTURE(L);
    const auto grown = grow_mlp(a.published_weights(0), shape, H, L, "relu", 9);
    NetworkSet b(specs, small_config(0, H, L), 6);
    REQUIRE(grown.size() == static_cast<std::size_t>(b.parameters(0)));
    b.set_weights(0, grown);
    const auto out_b = evaluate(b.evaluator(0), x);
    REQUIRE(out_a.size() == out_b.size());
    for (std::size_t k = 0; k < out_a.size(); ++k) CHECK(out_b[k] == doctest::Approx(out_a[k]).epsilon(1e-5));
    if (H > kHidden) {  // the new units are not dead: some of their incoming weights are not zero
      int nonzero = 0;
      for (int r = kHidden; r < H; ++r) nonzero += grown[static_cast<std::size_t>(r * kIn)] != 0.0F;
      CHECK(nonzero > (H - kHidden) / 2);
    }
  }
  // The same seed gives the same growth; another gives other new weights.
  CHECK(grow_mlp(a.published_weights(0), shape, 2 * kHidden, 2, "relu", 9) ==
        grow_mlp(a.published_weights(0), shape, 2 * kHidden, 2, "relu", 9));
  CHECK(grow_mlp(a.published_weights(0), shape, 2 * kHidden, 2, "relu", 9) !=
        grow_mlp(a.published_weights(0), shape, 2 * kHidden, 2, "relu", 10));
  // Shrinking, a wrong size, or a layer added under tanh are refused.
  CHECK_THROWS_AS(grow_mlp(a.published_weights(0), shape, kHidden - 1, 2, "relu", 9), InputError);
  CHECK_THROWS_AS(grow_mlp(a.published_weights(0), shape, kHidden, 1, "relu", 9), InputError);
  CHECK_THROWS_AS(grow_mlp(std::vector<float>(10), shape, kHidden, 2, "relu", 9), InputError);
  CHECK_THROWS_AS(grow_mlp(a.published_weights(0), shape, kHidden, 3, "tanh", 9), InputError);
  CHECK_NOTHROW(grow_mlp(a.published_weights(0), shape, 2 * kHidden, 2, "tanh", 9));
}

TEST_CASE("with invariant_chunk a row's output is bit-identical alone and anywhere in a batch of 37") {
  configure_torch_threads(1);
  NetworkSet nets(deep_cfr_specs(), small_config(/*invariant_chunk=*/8), 3);
  const auto batch = random_inputs(37, 11);
  const auto other = random_inputs(37, 12);
  for (int net = 0; net < kNets; ++net) {
    CAPTURE(net);
    const auto together = evaluate(nets.evaluator(net), batch);
    for (const int i : {0, 1, 7, 8, 20, 31, 32, 36}) {  // chunk boundaries and the padded last chunk
      CAPTURE(i);
      const auto x = std::span(batch).subspan(static_cast<std::size_t>(i * kIn), kIn);
      const auto alone = evaluate(nets.evaluator(net), x);
      CHECK(same_bits(alone, std::span(together).subspan(static_cast<std::size_t>(i * kOut), kOut)));
      // The same row at another position among other rows.
      auto mixed = other;
      const int j = (i * 5 + 3) % 37;
      std::copy(x.begin(), x.end(), mixed.begin() + j * kIn);
      const auto y = evaluate(nets.evaluator(net), mixed);
      CHECK(same_bits(alone, std::span(y).subspan(static_cast<std::size_t>(j * kOut), kOut)));
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Losses. A FixedBatch returns the same rows in the same order at every draw, and a learning rate
// of 0 leaves the weights as they are, so TrainStats::mean_loss is the loss of those rows under
// the published weights (the training copy equals them after construction or
// set_published_weights).

TEST_CASE("the advantage loss is the masked MSE weighted by t/T, by hand on a zero network") {
  configure_torch_threads(1);
  NetworkSet nets(deep_cfr_specs(), small_config(), 1);
  zero_weights(nets);  // every prediction is 0
  // Row 1: actions 0, 1 legal, iteration 1; row 2: action 2 legal, iteration 3. The illegal
  // actions' targets are large and must not count.
  FixedBatch batch({{row(1), {1, 2, 100, -50}, 0b0011, 1}, {row(2), {7, -3, 3, 9}, 0b0100, 3}});
  Rng rng(0);
  // T = 3: weights 1/3 and 1; (1/3·(1² + 2²) + 1·3²) / (1/3 + 1/3 + 1) = (32/3) / (5/3) = 6.4.
  TrainStats st = nets.train(0, batch, /*iteration=*/3, frozen(2, 2), rng);
  CHECK(st.steps == 2);
  CHECK(st.skipped_nonfinite == 0);
  CHECK(st.mean_loss == doctest::Approx(6.4).epsilon(1e-6));
  CHECK(st.last_loss == doctest::Approx(6.4).epsilon(1e-6));
  // Uniform weights: (1 + 4 + 9) / 3.
  st = nets.train(1, batch, 3, frozen(1, 2, /*linear=*/false), rng);
  CHECK(st.mean_loss == doctest::Approx(14.0 / 3).epsilon(1e-6));
  // T scales every weight alike: the normalised loss does not depend on it.
  st = nets.train(0, batch, 10, frozen(1, 2), rng);
  CHECK(st.mean_loss == doctest::Approx(6.4).epsilon(1e-6));
  // Learning rate 0 changed nothing.
  nets.publish();
  for (const float w : nets.published_weights()) REQUIRE(w == 0.0F);
}

TEST_CASE("the strategy loss is the soft-label cross-entropy over legal actions weighted by t/T, by hand on a zero network") {
  configure_torch_threads(1);
  NetworkSet nets(deep_cfr_specs(), small_config(), 1);
  zero_weights(nets);  // logits 0: the masked softmax is uniform over the legal actions
  FixedBatch batch({{row(1), {0.25F, 0.75F, 0, 0}, 0b0011, 1}, {row(2), {0.5F, 0.2F, 0.3F, 0}, 0b0111, 3}});
  Rng rng(0);
  // Row 1: −(0.25 + 0.75)·log(1/2) = ln 2; row 2: ln 3. T = 3: (1/3·ln 2 + 1·ln 3) / (4/3).
  TrainStats st = nets.train(kStrat, batch, 3, frozen(1, 2), rng);
  CHECK(st.steps == 1);
  CHECK(st.mean_loss == doctest::Approx((std::log(2.0) + 3 * std::log(3.0)) / 4).epsilon(1e-6));
  st = nets.train(kStrat, batch, 3, frozen(1, 2, /*linear=*/false), rng);
  CHECK(st.mean_loss == doctest::Approx((std::log(2.0) + std::log(3.0)) / 2).epsilon(1e-6));
}

TEST_CASE("both losses equal the values computed from the network's own outputs") {
  configure_torch_threads(1);
  NetworkSet nets(deep_cfr_specs(), small_config(), 21);
  const int iteration = 6;
  std::vector<FixedBatch::Row> rows;
  Rng g(5);
  const ActionMask masks[] = {0b1111, 0b0001, 0b1010, 0b0110, 0b1101};
  for (int i = 0; i < 5; ++i) {
    FixedBatch::Row r{row(40 + static_cast<std::uint64_t>(i)), std::vector<float>(kOut), masks[i], static_cast<float>(1 + i)};
    for (float& v : r.target) v = static_cast<float>(4 * g.uniform() - 2);
    rows.push_back(r);
  }
  // Advantage net of player 1: Σ legal·w·(pred − target)² / Σ legal·w, w = t/T.
  FixedBatch adv(rows);
  const auto pred = evaluate(nets.evaluator(1), adv.inputs());
  double num = 0, den = 0;
  for (int i = 0; i < 5; ++i)
    for (int a = 0; a < kOut; ++a)
      if (mask_has(rows[static_cast<std::size_t>(i)].legal, a)) {
        const double w = rows[static_cast<std::size_t>(i)].weight / iteration;
        const double d =
            pred[static_cast<std::size_t>(i * kOut + a)] - rows[static_cast<std::size_t>(i)].target[static_cast<std::size_t>(a)];
        num += w * d * d;
        den += w;
      }
  Rng rng(0);
  TrainStats st = nets.train(1, adv, iteration, frozen(1, 5), rng);
  CHECK(st.mean_loss == doctest::Approx(num / den).epsilon(1e-5));

  // Strategy net: targets become distributions over the legal actions;
  // Σ w·(−Σ_legal target·log softmax_legal(logits)) / Σ w.
  for (auto& r : rows) {
    float sum = 0;
    for (int a = 0; a < kOut; ++a) {
      float& v = r.target[static_cast<std::size_t>(a)];
      v = mask_has(r.legal, a) ? std::abs(v) : 0.0F;
      sum += v;
    }
    for (float& v : r.target) v /= sum;
  }
  FixedBatch strat(rows);
  const auto logits = evaluate(nets.evaluator(kStrat), strat.inputs());
  num = den = 0;
  for (int i = 0; i < 5; ++i) {
    const auto& r = rows[static_cast<std::size_t>(i)];
    double lse = 0;
    for (int a = 0; a < kOut; ++a)
      if (mask_has(r.legal, a)) lse += std::exp(static_cast<double>(logits[static_cast<std::size_t>(i * kOut + a)]));
    lse = std::log(lse);
    double ce = 0;
    for (int a = 0; a < kOut; ++a)
      if (mask_has(r.legal, a))
        ce -= r.target[static_cast<std::size_t>(a)] * (logits[static_cast<std::size_t>(i * kOut + a)] - lse);
    num += r.weight / iteration * ce;
    den += r.weight / iteration;
  }
  st = nets.train(kStrat, strat, iteration, frozen(1, 5), rng);
  CHECK(st.mean_loss == doctest::Approx(num / den).epsilon(1e-5));
}

TEST_CASE("illegal actions' advantage targets change neither the loss nor the trained weights") {
  configure_torch_threads(1);
  std::vector<FixedBatch::Row> rows;
  for (int i = 0; i < 8; ++i)
    rows.push_back({row(60 + static_cast<std::uint64_t>(i)),
                    {0.5F, -0.25F, 1.0F, 0.75F},
                    ActionMask{0b0101} << (i % 2),
                    static_cast<float>(1 + i % 3)});
  auto changed = rows;
  for (auto& r : changed)
    for (int a = 0; a < kOut; ++a)
      if (!mask_has(r.legal, a)) r.target[static_cast<std::size_t>(a)] = 1000.0F * static_cast<float>(a + 1);
  FixedBatch one(rows), two(changed);
  NetworkSet n1(deep_cfr_specs(), small_config(), 4), n2(deep_cfr_specs(), small_config(), 4);
  const auto before = net_weights(n1, 0);
  const TrainConfig cfg{.updates = 5, .batch_size = 8, .learning_rate = 1e-2};
  Rng r1(0), r2(0);
  const TrainStats s1 = n1.train(0, one, 3, cfg, r1);
  const TrainStats s2 = n2.train(0, two, 3, cfg, r2);
  CHECK(s1.steps == 5);
  CHECK(s1.mean_loss == s2.mean_loss);
  CHECK(s1.last_loss == s2.last_loss);
  n1.publish();
  n2.publish();
  CHECK(!same_bits(net_weights(n1, 0), before));  // the step did something
  CHECK(same_bits(net_weights(n1, 0), net_weights(n2, 0)));
}

TEST_CASE("an action illegal in every row of the batch gets no update in either loss") {
  // published_weights() lists each network's fc0.weight, fc0.bias, …, head.weight (out × h),
  // head.bias (out). With weight decay 0, a parameter whose gradient is exactly 0 is left as is
  // by AdamW; action 3's head row and bias only receive gradient through action 3's output.
  configure_torch_threads(1);
  std::vector<FixedBatch::Row> rows;
  for (int i = 0; i < 6; ++i)
    rows.push_back({row(80 + static_cast<std::uint64_t>(i)),
                    {0.2F, 0.5F, 0.3F, 0.0F},
                    i % 2 ? ActionMask{0b0111} : ActionMask{0b0011},
                    static_cast<float>(1 + i)});
  FixedBatch batch(rows);
  NetworkSet nets(deep_cfr_specs(), small_config(), 8);
  const TrainConfig cfg{.updates = 4, .batch_size = 6, .learning_rate = 1e-2, .weight_decay = 0};
  const auto per = static_cast<std::size_t>(nets.parameters(0));
  const std::size_t head = per - static_cast<std::size_t>(kOut * kHidden + kOut);
  const auto row_of = [&](const std::vector<float>& w, int a) {
    std::vector<float> r(w.begin() + static_cast<std::ptrdiff_t>(head + static_cast<std::size_t>(a * kHidden)),
                         w.begin() + static_cast<std::ptrdiff_t>(head + static_cast<std::size_t>((a + 1) * kHidden)));
    r.push_back(w[per - static_cast<std::size_t>(kOut - a)]);  // the bias
    return r;
  };
  for (const int net : {0, kStrat}) {
    CAPTURE(net);
    const auto before = net_weights(nets, net);
    Rng rng(0);
    nets.train(net, batch, 6, cfg, rng);
    nets.publish(net);
    const auto after = net_weights(nets, net);
    CHECK(same_bits(row_of(before, 3), row_of(after, 3)));
    for (const int a : {0, 1, 2}) CHECK(!same_bits(row_of(before, a), row_of(after, a)));
  }
}

TEST_CASE("a batch whose loss is not finite is skipped, counted, and leaves the weights alone") {
  configure_torch_threads(1);
  NetworkSet nets(deep_cfr_specs(), small_config(), 2);
  FixedBatch batch({{row(1), {1, std::nanf(""), 0, 0}, 0b0011, 1}, {row(2), {1, 2, 3, 4}, 0b1111, 1}});
  const auto before = nets.published_weights();
  Rng rng(0);
  const TrainStats st = nets.train(0, batch, 1, {.updates = 3, .batch_size = 2, .learning_rate = 1e-2}, rng);
  CHECK(st.steps == 0);
  CHECK(st.skipped_nonfinite == 3);
  CHECK(st.mean_loss == 0);
  nets.publish();
  CHECK(same_bits(nets.published_weights(), before));
}

// ---------------------------------------------------------------------------------------------
// Publication

TEST_CASE("set_published_weights publishes exactly the weights given, even where the set trained with a weight average") {
  // A data-parallel learner rank trains (keeping a weight average) and then receives rank 0's
  // published weights: its traversals must play those, not its own average.
  configure_torch_threads(1);
  NetworkSet trained(deep_cfr_specs(), small_config(), 17), source(deep_cfr_specs(), small_config(), 18);
  ReservoirMemory adv(256, kIn, kOut, 1);
  fill_memory(adv, 256, 3);
  Rng rng(1);
  trained.train(0, adv, 1, {.updates = 10, .batch_size = 64, .learning_rate = 1e-2, .ema_decay = 0.9}, rng);
  const std::vector<float> given = source.published_weights();
  REQUIRE(trained.published_weights() != given);
  trained.set_published_weights(given);
  CHECK(trained.published_weights() == given);
  const auto x = random_inputs(5, 7);
  CHECK(same_bits(all_outputs(trained, x), all_outputs(source, x)));
}

TEST_CASE("training, re-initialisation and averaging on another thread never change what the evaluators return until publish") {
  // What cfr-run does: advantage net 0 trains on the trainer thread while player 1's phase
  // queries the published snapshots.
  configure_torch_threads(1);
  NetworkSet nets(deep_cfr_specs(), small_config(), 17);
  ReservoirMemory adv(256, kIn, kOut, 1), strat(256, kIn, kOut, 2);
  fill_memory(adv, 256, 3);
  fill_memory(strat, 256, 4, 5, /*strategy=*/true);
  const auto x = random_inputs(9, 77);
  const auto before = all_outputs(nets, x);
  std::atomic<bool> done{false};
  std::thread trainer([&] {
    Rng rng(1);
    for (int it = 1; it <= 4; ++it) {
      nets.reinitialize(0, it);
      nets.train(0, adv, it, {.updates = 10, .batch_size = 64, .learning_rate = 1e-2, .ema_decay = 0.9}, rng);
      nets.train(kStrat, strat, it, {.updates = 10, .batch_size = 64, .learning_rate = 1e-2}, rng);
    }
    done = true;
  });
  int queries = 0, changed = 0;
  while (!done.load() || queries < 10) {
    ++queries;
    if (!same_bits(all_outputs(nets, x), before)) ++changed;
  }
  trainer.join();
  CHECK(queries >= 10);
  CHECK(changed == 0);
  CHECK(same_bits(all_outputs(nets, x), before));

  // publish(net) publishes that network only.
  const std::size_t w = static_cast<std::size_t>(9 * kOut);
  nets.publish(0);
  auto now = all_outputs(nets, x);
  CHECK(!same_bits(std::span(now).first(w), std::span(before).first(w)));
  CHECK(same_bits(std::span(now).subspan(w), std::span(before).subspan(w)));
  nets.publish();
  now = all_outputs(nets, x);
  CHECK(same_bits(std::span(now).subspan(w, w), std::span(before).subspan(w, w)));  // net 1 never trained
  CHECK(!same_bits(std::span(now).subspan(2 * w), std::span(before).subspan(2 * w)));
}

TEST_CASE("every query sees exactly the last published weights, on every replica") {
  configure_torch_threads(1);
  NetworkSet nets(deep_cfr_specs(), small_config(), 1);
  nets.set_replicas(3);
  CHECK(nets.replicas() == 3);
  const auto weights_a = NetworkSet(deep_cfr_specs(), small_config(), 101).published_weights();
  const auto weights_b = NetworkSet(deep_cfr_specs(), small_config(), 102).published_weights();
  const auto x = random_inputs(5, 9);
  nets.set_published_weights(weights_a);
  const auto out_a = all_outputs(nets, x);
  nets.set_published_weights(weights_b);
  const auto out_b = all_outputs(nets, x);
  REQUIRE(!same_bits(out_a, out_b));
  for (int k = 0; k < 40; ++k) {
    const bool a = k % 3 != 1;
    nets.set_published_weights(a ? weights_a : weights_b);
    CHECK(same_bits(nets.published_weights(), a ? weights_a : weights_b));
    for (int r = 0; r < nets.replicas(); ++r)
      for (int net = 0; net < kNets; ++net) {
        const auto y = evaluate(nets.evaluator(net, r), x);
        const auto& want = a ? out_a : out_b;
        CHECK(
            same_bits(y, std::span(want).subspan(static_cast<std::size_t>(net * 5 * kOut), static_cast<std::size_t>(5 * kOut))));
      }
  }
  // A weight vector of another size is refused.
  std::vector<float> short_weights(weights_a.begin(), weights_a.end() - 1);
  CHECK_THROWS_AS(nets.set_published_weights(short_weights), InputError);
  CHECK(same_bits(nets.published_weights(), weights_a));
}

// ---------------------------------------------------------------------------------------------
// MMD's policy loss (NetLoss::kClippedPolicyGradient, engine/traversal/mmd.h's target layout)

namespace {

/// A target of 4·kOut + 1 floats: advantage and behaviour probability at `action`, the magnet's
/// policy, the bot's move (−1: none), the value target (unused by this loss).
std::vector<float> pg_target(int action, float advantage, float behaviour, std::vector<float> magnet, int bot) {
  std::vector<float> t(4 * kOut + 1, 0.0F);
  t[static_cast<std::size_t>(action)] = advantage;
  t[static_cast<std::size_t>(kOut + action)] = behaviour;
  std::copy(magnet.begin(), magnet.end(), t.begin() + 2 * kOut);
  if (bot >= 0) t[static_cast<std::size_t>(3 * kOut + bot)] = 1.0F;
  t[4 * kOut] = 123.0F;
  return t;
}

NetworkSpecs policy_specs() {
  return {{.name = "policy",
           .input_width = kIn,
           .output_width = kOut,
           .loss = NetLoss::kClippedPolicyGradient,
           .target_width = 4 * kOut + 1}};
}

/// One step of the policy loss with `terms` on a zero network (π uniform over the legal actions)
/// over two rows. Row 1: actions 0, 1 legal (π = ½, ½), action 1 taken with behaviour probability
/// ½ (ratio 1), advantage 2, magnet (¼, ¾), the bot played 0. Row 2: actions 0–2 legal (π = ⅓
/// each), action 2 taken with behaviour probability ¼: ratio 4/3, clipped to 1.2 against the
/// advantage −1 (the pessimistic side: −min(−4/3, −1.2) = 4/3); uniform magnet; no bot move.
TrainStats two_row_policy_step(const TrainConfig::PolicyGradientTerms& terms) {
  configure_torch_threads(1);
  NetworkSet nets(policy_specs(), small_config(), 1);
  nets.set_published_weights(std::vector<float>(static_cast<std::size_t>(nets.total_parameters()), 0.0F));
  FixedBatch batch({{row(1), pg_target(1, 2, 0.5F, {0.25F, 0.75F, 0, 0}, 0), 0b0011, 1},
                    {row(2), pg_target(2, -1, 0.25F, {1 / 3.0F, 1 / 3.0F, 1 / 3.0F, 0}, -1), 0b0111, 1}});
  TrainConfig cfg = frozen(1, 2, false);
  cfg.policy_gradient = terms;
  Rng rng(0);
  return nets.train(0, batch, 1, cfg, rng);
}

}  // namespace

TEST_CASE("MMD's policy loss is the clipped surrogate plus the magnet KL and the cloning term, by hand on a zero network") {
  const TrainStats st = two_row_policy_step({.clip = 0.2, .magnet_weight = 0.5, .bc_weight = 2, .entropy_weight = 0.1});
  const double kl1 = 0.5 * std::log(0.5 / 0.25) + 0.5 * std::log(0.5 / 0.75);
  const double row1 = -2 + 0.5 * kl1 + 2 * std::log(2.0) - 0.1 * std::log(2.0);
  const double row2 = 4.0 / 3 - 0.1 * std::log(3.0);
  CHECK(st.steps == 1);
  CHECK(st.mean_loss == doctest::Approx((row1 + row2) / 2).epsilon(1e-5));
  CHECK(st.policy_gradient.surrogate == doctest::Approx((-2 + 4.0 / 3) / 2).epsilon(1e-5));
  CHECK(st.policy_gradient.magnet_kl == doctest::Approx(kl1 / 2).epsilon(1e-4));
  CHECK(st.policy_gradient.bot_cross_entropy == doctest::Approx(std::log(2.0) / 2).epsilon(1e-5));
  CHECK(st.policy_gradient.entropy == doctest::Approx((std::log(2.0) + std::log(3.0)) / 2).epsilon(1e-5));
  CHECK(st.policy_gradient.clipped_share == doctest::Approx(0.5));
}

TEST_CASE("MMD's policy loss with normalize_advantage standardises the batch's advantages, by hand") {
  // Advantages 2 and −1: mean ½, standard deviation 1.5, so the surrogate sees +1 (ratio 1: −1)
  // and −1 (ratio 4/3 clipped to 1.2, pessimistic side: +4/3).
  const TrainStats st =
      two_row_policy_step({.clip = 0.2, .magnet_weight = 0, .bc_weight = 0, .entropy_weight = 0, .normalize_advantage = true});
  CHECK(st.steps == 1);
  CHECK(st.policy_gradient.surrogate == doctest::Approx((-1 + 4.0 / 3) / 2).epsilon(1e-5));
  CHECK(st.mean_loss == doctest::Approx((-1 + 4.0 / 3) / 2).epsilon(1e-5));
}

TEST_CASE("MMD's policy loss raises a positive-advantage move, and its cloning term alone moves the policy to the bot's") {
  configure_torch_threads(1);
  auto prob = [](NetworkSet& nets, const std::vector<float>& x, ActionMask legal, int a) {
    const auto logits = evaluate(nets.evaluator(0), x);
    double sum = 0;
    for (int b = 0; b < kOut; ++b) sum += mask_has(legal, b) ? std::exp(logits[static_cast<std::size_t>(b)]) : 0.0;
    return std::exp(logits[static_cast<std::size_t>(a)]) / sum;
  };
  const auto x = row(5);
  const std::vector<float> uniform = {1 / 3.0F, 1 / 3.0F, 1 / 3.0F, 0};
  TrainConfig cfg{
      .updates = 30, .batch_size = 1, .learning_rate = 1e-2, .weight_decay = 0, .grad_clip = 0, .linear_weighting = false};
  {  // advantage +1 at action 2, no KL terms
    NetworkSet nets(policy_specs(), small_config(), 3);
    const double before = prob(nets, x, 0b0111, 2);
    FixedBatch batch({{x, pg_target(2, 1, static_cast<float>(before), uniform, -1), 0b0111, 1}});
    cfg.policy_gradient = {.clip = 10, .magnet_weight = 0, .bc_weight = 0, .entropy_weight = 0};
    Rng rng(0);
    nets.train(0, batch, 1, cfg, rng);
    nets.publish();
    CHECK(prob(nets, x, 0b0111, 2) > before + 0.2);
  }
  {  // advantage 0: only the cloning term toward the bot's move 0 acts
    NetworkSet nets(policy_specs(), small_config(), 3);
    FixedBatch batch({{x, pg_target(2, 0, 0.3F, uniform, 0), 0b0111, 1}});
    cfg.policy_gradient = {.clip = 0.2, .magnet_weight = 0, .bc_weight = 1, .entropy_weight = 0};
    Rng rng(0);
    nets.train(0, batch, 1, cfg, rng);
    nets.publish();
    CHECK(prob(nets, x, 0b0111, 0) > 0.8);
  }
}
