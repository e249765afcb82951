// nets/networks.h: save/load round trips (weights, AdamW moments, weight averages), refusals that
// name the file, re-initialisation and the published weight average.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "engine/core/errors.h"
#include "nets/networks.h"
#include "tests/nets/helpers.h"

using namespace cfr;
using namespace cfr::nets_test;

namespace {

const TrainConfig kAdamW{.updates = 5, .batch_size = 32, .learning_rate = 1e-2, .weight_decay = 1e-2};

// The three memories of a run, filled from a seed.
struct Memories {
  ReservoirMemory adv0{128, kIn, kOut, 1}, adv1{128, kIn, kOut, 2}, strat{128, kIn, kOut, 3};
  explicit Memories(std::uint64_t seed) {
    fill_memory(adv0, 128, seed);
    fill_memory(adv1, 128, seed + 1);
    fill_memory(strat, 128, seed + 2, 5, /*strategy=*/true);
  }
  // An exact copy (a memory's batch order is part of its state).
  void copy_from(const Memories& o) {
    for (auto [to, from] : {std::pair{&adv0, &o.adv0}, std::pair{&adv1, &o.adv1}, std::pair{&strat, &o.strat}}) {
      std::stringstream s;
      from->save(s);
      to->load(s, "copy");
    }
  }
};

// One iteration's training of the three networks: advantage nets plain, strategy net averaged.
void train_all(NetworkSet& nets, Memories& m, int iteration, Rng& rng, int updates) {
  TrainConfig cfg = kAdamW;
  cfg.updates = updates;
  nets.train(0, m.adv0, iteration, cfg, rng);
  nets.train(1, m.adv1, iteration, cfg, rng);
  cfg.ema_decay = 0.8;
  nets.train(kStrat, m.strat, iteration, cfg, rng);
}

std::string load_error(NetworkSet& nets, const std::string& path) {
  try {
    nets.load(path);
  } catch (const InputError& e) {
    return e.what();
  } catch (const std::exception& e) {
    const std::string what = e.what();
    return "not an InputError: " + what.substr(0, what.find('\n'));
  }
  return "(no exception)";
}

}  // namespace

TEST_CASE("save then load into a fresh object gives every network's outputs bit for bit") {
  configure_torch_threads(1);
  NetworkSet nets(deep_cfr_specs(), small_config(), 1);
  Memories m(10);
  Rng rng(3);
  for (int it = 1; it <= 2; ++it) train_all(nets, m, it, rng, 5);
  nets.publish();
  const auto x = random_inputs(50, 6);
  const auto out = all_outputs(nets, x);
  TempFile file("round_trip.pt");
  nets.save(file.path);

  NetworkSet fresh(deep_cfr_specs(), small_config(), 999);
  REQUIRE(!same_bits(all_outputs(fresh, x), out));
  fresh.load(file.path);  // load publishes
  CHECK(same_bits(all_outputs(fresh, x), out));
  CHECK(same_bits(fresh.published_weights(), nets.published_weights()));
}

TEST_CASE("a missing file, a corrupt one or one of another number of networks is refused naming the file") {
  configure_torch_threads(1);
  NetworkSet nets(deep_cfr_specs(), small_config(), 1);
  const auto x = random_inputs(3, 4);
  const auto before = all_outputs(nets, x);
  TempFile missing("missing.pt");
  CHECK(load_error(nets, missing.path).find(missing.path) != std::string::npos);
  TempFile garbage("garbage.pt");
  std::ofstream(garbage.path) << "not a LibTorch archive";
  CHECK(load_error(nets, garbage.path).find(garbage.path) != std::string::npos);
  TempFile file("three.pt");
  nets.save(file.path);
  auto two = deep_cfr_specs();
  two.pop_back();
  NetworkSet fewer(two, small_config(), 1);
  CHECK(load_error(fewer, file.path).find(file.path + ": the archive holds more than the 2 networks") != std::string::npos);
  auto four = deep_cfr_specs();
  four.push_back(four.back());
  NetworkSet more(four, small_config(), 1);
  CHECK(load_error(more, file.path).find(file.path) != std::string::npos);
  CHECK(same_bits(all_outputs(nets, x), before));
}

// LibTorch's Module::load replaces each parameter with the file's tensor whatever its shape, so
// load() reads into new modules, checks their shapes and only then swaps them in (before that
// fix, a file of another width left the nets in its shape and publish() threw c10::Error).
TEST_CASE("loading a file of another network shape is refused naming the file and changes nothing") {
  configure_torch_threads(1);
  NetworkSet nets(deep_cfr_specs(), small_config(), 1);
  TempFile file("shape.pt");
  nets.save(file.path);
  struct Other {
    int in, out, h, layers;
  };
  for (const Other o :
       {Other{kIn, kOut, 2 * kHidden, kLayers}, Other{kIn, kOut, kHidden, kLayers + 1}, Other{kIn, kOut, kHidden, kLayers - 1},
        Other{kIn + 1, kOut, kHidden, kLayers}, Other{kIn, kOut + 1, kHidden, kLayers}}) {
    CAPTURE(o.in);
    CAPTURE(o.out);
    CAPTURE(o.h);
    CAPTURE(o.layers);
    NetworkSet other(deep_cfr_specs(o.in, o.out), small_config(0, o.h, o.layers), 2);
    const auto x = random_inputs(3, 4, o.in);
    const auto before = all_outputs(other, x);
    const std::string what = load_error(other, file.path);
    CAPTURE(what);
    CHECK(what.find(file.path) != std::string::npos);
    // The refused load left the published networks and the training copies as they were.
    CHECK(same_bits(all_outputs(other, x), before));
    other.publish();
    CHECK(same_bits(all_outputs(other, x), before));
  }
}

TEST_CASE("AdamW moments and weight averages are restored: k steps, save, m steps equals load, m steps") {
  configure_torch_threads(1);
  NetworkSet nets(deep_cfr_specs(), small_config(), 1);
  Memories m(20);
  Rng rng(4);
  train_all(nets, m, 1, rng, 6);  // k = 6 steps per network
  TempFile file("adamw.pt");
  nets.save(file.path);
  nets.publish();
  const auto at_save = nets.published_weights();  // advantage nets: their training weights
  Memories m_loaded(0), m_control(0);
  m_loaded.copy_from(m);
  m_control.copy_from(m);
  const Rng rng_at_save = rng;

  train_all(nets, m, 2, rng, 7);  // m = 7 more steps
  nets.publish();
  const auto continued = nets.published_weights();
  REQUIRE(!same_bits(continued, at_save));

  NetworkSet loaded(deep_cfr_specs(), small_config(), 999);
  loaded.load(file.path);
  Rng rng_loaded = rng_at_save;
  train_all(loaded, m_loaded, 2, rng_loaded, 7);
  loaded.publish();
  for (int net = 0; net < kNets; ++net) {
    CAPTURE(net);
    CHECK(same_bits(net_weights(loaded, net), net_weights(nets, net)));
  }

  // The control: the same training weights without the optimiser state (fresh AdamW moments and
  // step count) continue differently, so the check above can see a lost optimiser state.
  NetworkSet control(deep_cfr_specs(), small_config(), 999);
  control.set_published_weights(at_save);
  Rng rng_control = rng_at_save;
  train_all(control, m_control, 2, rng_control, 7);
  control.publish();
  CHECK(!same_bits(net_weights(control, 0), net_weights(nets, 0)));
  CHECK(!same_bits(net_weights(control, 1), net_weights(nets, 1)));
}

TEST_CASE("reinitialize_advantage depends only on (seed, player, iteration) and resets the optimiser and the average") {
  configure_torch_threads(1);
  Memories m(30);
  NetworkSet a(deep_cfr_specs(), small_config(), 5), b(deep_cfr_specs(), small_config(), 5),
      c(deep_cfr_specs(), small_config(), 6);
  Rng rng(1);
  TrainConfig cfg = kAdamW;
  cfg.ema_decay = 0.9;
  a.train(0, m.adv0, 1, cfg, rng);  // a has moments and an average; b has neither
  a.publish();
  const auto x = random_inputs(4, 8);
  const auto trained = evaluate(a.evaluator(0), x);
  a.reinitialize(0, 7);
  b.reinitialize(0, 7);
  c.reinitialize(0, 7);
  CHECK(same_bits(evaluate(a.evaluator(0), x), trained));  // not published yet
  a.publish();
  b.publish();
  c.publish();
  CHECK(same_bits(net_weights(a, 0), net_weights(b, 0)));   // the new weights, not a's old average
  CHECK(!same_bits(net_weights(a, 0), net_weights(c, 0)));  // another run seed
  b.reinitialize(0, 8);
  b.reinitialize(1, 7);
  b.publish();
  CHECK(!same_bits(net_weights(a, 0), net_weights(b, 0)));  // another iteration
  CHECK(!same_bits(net_weights(a, 0), net_weights(b, 1)));  // another player
  b.reinitialize(0, 7);
  // Same training from the re-initialised nets: a's old AdamW moments are gone.
  Memories m2(0);
  m2.copy_from(m);
  Rng ra(9), rb(9);
  a.train(0, m.adv0, 2, kAdamW, ra);
  b.train(0, m2.adv0, 2, kAdamW, rb);
  a.publish();
  b.publish();
  CHECK(same_bits(net_weights(a, 0), net_weights(b, 0)));
}

TEST_CASE("with ema_decay β publish sends the average ema = b·ema + (1 − b)·w, b = min(β, (1 + s)/(10 + s))") {
  configure_torch_threads(1);
  FixedBatch batch({{random_inputs(1, 1), {0.5F, -1, 2, 0}, 0b0111, 1}, {random_inputs(1, 2), {1, 1, -1, 3}, 0b1011, 2}});
  NetworkSet averaged(deep_cfr_specs(), small_config(), 3), plain(deep_cfr_specs(), small_config(), 3);
  TrainConfig cfg{.updates = 1, .batch_size = 2, .learning_rate = 5e-2};
  TrainConfig avg_cfg = cfg;
  avg_cfg.ema_decay = 0.2;
  std::vector<double> ema;
  for (int s = 0; s < 4; ++s) {  // b = 0.1, 2/11, then β = 0.2 (3/12 > β)
    CAPTURE(s);
    Rng r1(0), r2(0);
    averaged.train(kStrat, batch, 2, avg_cfg, r1);
    plain.train(kStrat, batch, 2, cfg, r2);
    averaged.publish();
    plain.publish();
    const auto w = net_weights(plain, kStrat);        // the training weights after step s
    if (ema.empty()) ema.assign(w.begin(), w.end());  // the average starts at the weights
    const double b = std::min(0.2, (1.0 + s) / (10.0 + s));
    for (std::size_t i = 0; i < w.size(); ++i) ema[i] = b * ema[i] + (1 - b) * w[i];
    const auto got = net_weights(averaged, kStrat);
    double worst = 0;
    for (std::size_t i = 0; i < w.size(); ++i) worst = std::max(worst, std::abs(got[i] - ema[i]));
    CHECK(worst < 1e-6);
    if (s > 0) CHECK(!same_bits(got, w));
  }
  // The advantage nets were not averaged: their published weights are the training weights.
  CHECK(same_bits(net_weights(averaged, 0), net_weights(plain, 0)));
}
