// nets/networks.h in bfloat16 (NetworkConfig::precision): the choice and its refusal, batch
// invariance and reproducibility within bf16, closeness to fp32, checkpoints across precisions.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "engine/core/errors.h"
#include "nets/networks.h"
#include "tests/nets/helpers.h"

using namespace cfr;
using namespace cfr::nets_test;

namespace {

// Lost Cities' advantage network shape (297 inputs, 22 actions) at a test's width: oneDNN picks
// its bfloat16 kernels by shape, so the invariance is checked on the widths runs use.
constexpr int kLcIn = 297;
constexpr int kLcOut = 22;

NetworkConfig with_precision(NetworkConfig c, const std::string& precision) {
  c.precision = precision;
  return c;
}

/// The largest |a − b| over the largest |b|.
double relative_gap(std::span<const float> a, std::span<const float> b) {
  REQUIRE(a.size() == b.size());
  double gap = 0, scale = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    gap = std::max(gap, static_cast<double>(std::abs(a[i] - b[i])));
    scale = std::max(scale, static_cast<double>(std::abs(b[i])));
  }
  return gap / std::max(scale, 1e-12);
}

/// n samples whose advantage targets are a smooth function of the inputs (something to learn):
/// target a = 0.8·x_a − 0.5·x_a·x_{a+1}, every action legal, iterations 1..3.
void fill_learnable(ReservoirMemory& mem, int n, std::uint64_t seed) {
  const auto x = random_inputs(n, seed);
  std::vector<float> target(kOut);
  for (int i = 0; i < n; ++i) {
    const float* in = x.data() + static_cast<std::ptrdiff_t>(i) * kIn;
    for (int a = 0; a < kOut; ++a) target[static_cast<std::size_t>(a)] = 0.8F * in[a] - 0.5F * in[a] * in[a + 1];
    mem.insert(in, target.data(), (ActionMask{1} << kOut) - 1, 1 + i % 3);
  }
}

}  // namespace

TEST_CASE("network.precision resolves fp32 and bf16 as given, auto to one of them, and refuses another value naming the key") {
  CHECK(resolve_precision("fp32", "cpu").name == "fp32");
  CHECK(resolve_precision("bf16", "cpu").name == "bf16");
  const PrecisionChoice a = resolve_precision("auto", "cpu");
  CHECK((a.name == "fp32" || a.name == "bf16"));
  CHECK(a.why.find("network.precision = auto: " + a.name) == 0);
  CHECK_THROWS_WITH_AS(resolve_precision("fp16", "cpu"), "network.precision = 'fp16'; valid: fp32, bf16, auto", InputError);
  CHECK_THROWS_AS(NetworkSet(deep_cfr_specs(), with_precision(small_config(), "half"), 1), InputError);
  NetworkSet nets(deep_cfr_specs(), with_precision(small_config(), "bf16"), 1);
  CHECK(nets.precision() == "bf16");
  NetworkSet plain(deep_cfr_specs(), small_config(), 1);
  CHECK(plain.precision() == "fp32");
}

TEST_CASE("in bf16 with invariant_chunk a row's output is bit-identical alone and anywhere in a batch of 37") {
  configure_torch_threads(1);
  for (const int width : {kIn, kLcIn}) {
    CAPTURE(width);
    const int out = width == kIn ? kOut : kLcOut;
    NetworkSet nets(deep_cfr_specs(width, out), with_precision(small_config(/*invariant_chunk=*/8, 64, 3), "bf16"), 3);
    const auto batch = random_inputs(37, 11, width);
    const auto other = random_inputs(37, 12, width);
    for (int net = 0; net < kNets; ++net) {
      CAPTURE(net);
      const auto together = evaluate(nets.evaluator(net), batch);
      for (const int i : {0, 1, 7, 8, 20, 31, 32, 36}) {  // chunk boundaries and the padded last chunk
        CAPTURE(i);
        const auto x = std::span(batch).subspan(static_cast<std::size_t>(i * width), static_cast<std::size_t>(width));
        const auto alone = evaluate(nets.evaluator(net), x);
        CHECK(same_bits(alone, std::span(together).subspan(static_cast<std::size_t>(i * out), static_cast<std::size_t>(out))));
        auto mixed = other;
        const int j = (i * 5 + 3) % 37;
        std::copy(x.begin(), x.end(), mixed.begin() + j * width);
        const auto y = evaluate(nets.evaluator(net), mixed);
        CHECK(same_bits(alone, std::span(y).subspan(static_cast<std::size_t>(j * out), static_cast<std::size_t>(out))));
      }
    }
  }
}

// bfloat16 keeps 8 significant bits (a relative rounding of at most 2^-9 per value); through the
// rounded inputs, weights and activations of a 3-layer MLP the outputs stay within 2% of the
// output scale of the float32 forward on the same weights (measured: 0.4–0.5% on 3×256 nets).
TEST_CASE("bf16 outputs are within 2% of the output scale of fp32's on the same weights, whole batches and chunks alike") {
  configure_torch_threads(1);
  for (const int chunk : {0, 8}) {
    CAPTURE(chunk);
    NetworkSet full(deep_cfr_specs(kLcIn, kLcOut), small_config(chunk, 256, 3), 5);
    NetworkSet half(deep_cfr_specs(kLcIn, kLcOut), with_precision(small_config(chunk, 256, 3), "bf16"), 5);
    REQUIRE(same_bits(full.published_weights(), half.published_weights()));  // the same float32 weights
    const auto x = random_inputs(300, 21, kLcIn);
    for (int net = 0; net < kNets; ++net) {
      CAPTURE(net);
      const auto a = evaluate(half.evaluator(net), x);
      const auto b = evaluate(full.evaluator(net), x);
      const double gap = relative_gap(a, b);
      MESSAGE("network ", net, " chunk ", chunk, ": bf16 within ", gap, " of the fp32 output scale");
      CHECK(gap < 0.02);
      CHECK(gap > 0);  // computed in bfloat16 indeed
      CHECK(std::all_of(a.begin(), a.end(), [](float v) { return std::isfinite(v); }));
    }
  }
}

TEST_CASE("bf16 training is reproducible bit for bit and lowers the loss as fp32 does") {
  configure_torch_threads(1);
  const TrainConfig tc{.updates = 200, .batch_size = 256, .learning_rate = 1e-2, .weight_decay = 0};
  auto trained = [&](const std::string& precision) {
    auto nets = std::make_unique<NetworkSet>(deep_cfr_specs(), with_precision(small_config(0, 64, 2), precision), 9);
    ReservoirMemory mem(4096, kIn, kOut, 3);  // a memory of its own: sampling reorders it
    fill_learnable(mem, 4096, 31);
    Rng rng(4);
    const TrainStats first = nets->train(0, mem, 3, {.updates = 1, .batch_size = 256, .learning_rate = 0}, rng);
    const TrainStats st = nets->train(0, mem, 3, tc, rng);
    nets->publish();
    return std::tuple(std::move(nets), first.mean_loss, st.mean_loss);
  };
  auto [a, a0, a1] = trained("bf16");
  auto [b, b0, b1] = trained("bf16");
  auto [f, f0, f1] = trained("fp32");
  CHECK(same_bits(a->published_weights(), b->published_weights()));
  CHECK(a1 == b1);
  MESSAGE("loss from ", f0, " to a mean of ", f1, " over 200 steps in fp32, from ", a0, " to ", a1, " in bf16");
  CHECK(a0 == doctest::Approx(f0).epsilon(0.05));
  CHECK(a1 < 0.5 * a0);
  CHECK(a1 < 1.1 * f1);
  CHECK(!same_bits(a->published_weights(), f->published_weights()));
}

TEST_CASE("a checkpoint written in one precision loads in the other with the same float32 weights") {
  configure_torch_threads(1);
  ReservoirMemory mem(512, kIn, kOut, 3);
  fill_memory(mem, 512, 8);
  const auto x = random_inputs(40, 17);
  for (const auto& [from, to] : {std::pair<std::string, std::string>{"bf16", "fp32"}, {"fp32", "bf16"}}) {
    CAPTURE(from);
    NetworkSet writer(deep_cfr_specs(), with_precision(small_config(), from), 2);
    Rng rng(3);
    writer.train(0, mem, 2, {.updates = 20, .batch_size = 64, .learning_rate = 1e-2, .ema_decay = 0.9}, rng);
    writer.publish();
    TempFile file("precision_" + from + ".pt");
    writer.save(file.path);
    NetworkSet reader(deep_cfr_specs(), with_precision(small_config(), to), 99);
    reader.load(file.path);
    CHECK(reader.precision() == to);
    CHECK(same_bits(reader.published_weights(), writer.published_weights()));
    // A set of the writer's precision reading the file gives the writer's outputs exactly.
    NetworkSet again(deep_cfr_specs(), with_precision(small_config(), from), 99);
    again.load(file.path);
    CHECK(same_bits(all_outputs(again, x), all_outputs(writer, x)));
    CHECK(relative_gap(all_outputs(reader, x), all_outputs(writer, x)) < 0.02);
    // And both continue training from the same optimiser state.
    Rng r1(6), r2(6);
    NetworkSet cont(deep_cfr_specs(), with_precision(small_config(), from), 99);
    cont.load(file.path);
    ReservoirMemory m1(512, kIn, kOut, 3), m2(512, kIn, kOut, 3);  // sampling reorders a memory
    fill_memory(m1, 512, 8);
    fill_memory(m2, 512, 8);
    writer.train(0, m1, 3, {.updates = 5, .batch_size = 64, .learning_rate = 1e-2, .ema_decay = 0.9}, r1);
    cont.train(0, m2, 3, {.updates = 5, .batch_size = 64, .learning_rate = 1e-2, .ema_decay = 0.9}, r2);
    writer.publish();
    cont.publish();
    CHECK(same_bits(cont.published_weights(), writer.published_weights()));
  }
}

TEST_CASE("bf16 replicas and published weights agree with the first evaluator bit for bit") {
  configure_torch_threads(1);
  NetworkSet nets(deep_cfr_specs(), with_precision(small_config(8), "bf16"), 4);
  nets.set_replicas(3);
  ReservoirMemory mem(256, kIn, kOut, 3);
  fill_memory(mem, 256, 2);
  Rng rng(1);
  nets.train(1, mem, 2, {.updates = 10, .batch_size = 64, .learning_rate = 1e-2}, rng);
  nets.publish();
  const auto x = random_inputs(19, 5);
  for (int net = 0; net < kNets; ++net)
    for (int r = 1; r < 3; ++r) CHECK(same_bits(evaluate(nets.evaluator(net, r), x), evaluate(nets.evaluator(net), x)));
  // A traversal process of a distributed run receives the float32 published weights.
  NetworkSet remote(deep_cfr_specs(), with_precision(small_config(8), "bf16"), 77);
  remote.set_published_weights(nets.published_weights());
  CHECK(same_bits(all_outputs(remote, x), all_outputs(nets, x)));
}
