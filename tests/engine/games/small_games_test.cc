// Kuhn and Leduc poker: conformance, tree sizes and the exact values of small-games.md.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>

#include <fmt/format.h>

#include "engine/games/games.h"
#include "engine/memory/reservoir.h"
#include "engine/tabular/best_response.h"
#include "engine/tabular/policy.h"
#include "engine/tabular/tabular_cfr.h"
#include "tests/engine/games/conformance.h"

using namespace cfr;
using doctest::Approx;

namespace {

template <class S>
void conformance(int games) {
  testing::run_conformance<S>([](int, Rng&) { return S::initial(); },
                              testing::ConformanceOptions{.games = games, .seed = 3, .max_steps = 100},
                              [](const S&, int, const S& after) {
                                if (after.is_terminal()) CHECK(std::abs(after.returns(0)) <= 13);
                              });
}

double nash_conv_after(const GameTree& t, TabularAlgo algo, int iterations, std::uint64_t seed = 0) {
  TabularSolver s(t, {.algo = algo, .seed = seed});
  for (int i = 0; i < iterations; ++i) s.run_iteration();
  return exploitability(s.average_policy()).nash_conv;
}

}  // namespace

TEST_CASE("Kuhn poker passes the conformance suite") { conformance<kuhn::State>(300); }
TEST_CASE("Leduc poker passes the conformance suite") { conformance<leduc::State>(300); }

TEST_CASE("the game registry selects games by name and rejects unknown ones") {
  CHECK(visit_game("kuhn", []<class S>(std::type_identity<S>) { return S::kName; }) == "kuhn");
  CHECK(visit_game("leduc", []<class S>(std::type_identity<S>) { return S::kName; }) == "leduc");
  CHECK(visit_game("lost_cities", []<class S>(std::type_identity<S>) { return GameState<S>; }));
  CHECK_THROWS_WITH_AS(visit_game("go", []<class S>(std::type_identity<S>) { return 0; }),
                       doctest::Contains("unknown game 'go'; valid games: lost_cities, kuhn, leduc"), InputError);
  CHECK_THROWS_WITH_AS(build_game_tree("lost_cities"), doctest::Contains("too large to enumerate"), InputError);
}

TEST_CASE("Kuhn has 54 non-chance states and 12 information sets") {
  const GameTree t = build_game_tree("kuhn");
  CHECK(t.num_nodes() - 4 == 54);  // 4 chance nodes: the root and one per first card
  CHECK(t.num_infosets() == 12);
  CHECK(t.num_infosets(0) == 6);
  CHECK(t.num_infosets(1) == 6);
  CHECK(t.find_infoset("K|pb") >= 0);
  CHECK(t.find_infoset("J|") >= 0);
  CHECK(t.find_infoset("Q|b") >= 0);
}

TEST_CASE("Kuhn's uniform policy has NashConv 0.916667 with best-response values 0.5 and 0.416667") {
  const GameTree t = build_game_tree("kuhn");
  const auto r = exploitability(TabularPolicy::uniform(t));
  CHECK(r.nash_conv == Approx(0.916667).epsilon(1e-6 / 0.916667));
  CHECK(std::abs(r.nash_conv - 11.0 / 12.0) < 1e-9);
  CHECK(r.br_value[0] == Approx(0.5).epsilon(1e-9));
  CHECK(r.br_value[1] == Approx(0.416667).epsilon(1e-6));
}

TEST_CASE("vanilla CFR on Kuhn: after 300 iterations the value is -1/18 within 1e-3 and exploitability at most 0.05") {
  const GameTree t = build_game_tree("kuhn");
  TabularSolver s(t, {.algo = TabularAlgo::kCfr});
  for (int i = 0; i < 300; ++i) s.run_iteration();
  const auto avg = s.average_policy();
  CHECK(std::abs(expected_value(avg) - (-1.0 / 18.0)) < 1e-3);
  CHECK(exploitability(avg).exploitability <= 0.05);
}

// OpenSpiel's regression bound is "1000 iterations → NashConv ≤ 0.05" for its own RNG stream; over
// our seeds 1000 iterations give 0.034–0.090 (median 0.054), so we check every seed gets there.
TEST_CASE("external-sampling MCCFR on Kuhn reaches NashConv 0.05 for every seed tried") {
  const GameTree t = build_game_tree("kuhn");
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    TabularSolver s(t, {.algo = TabularAlgo::kExternalSampling, .seed = seed});
    int reached = -1;
    for (int i = 1; i <= 5000 && reached < 0; ++i) {
      s.run_iteration();
      if (i % 250 == 0 && exploitability(s.average_policy()).nash_conv <= 0.05) reached = i;
    }
    MESSAGE(fmt::format("ES-MCCFR Kuhn seed {}: NashConv ≤ 0.05 at iteration {}", seed, reached));
    CHECK(reached > 0);
  }
}

TEST_CASE("outcome-sampling MCCFR on Kuhn falls below NashConv 0.1 within 20000 iterations") {
  const GameTree t = build_game_tree("kuhn");
  CHECK(nash_conv_after(t, TabularAlgo::kOutcomeSampling, 20000, 1) < 0.1);
}

TEST_CASE("Leduc has 936 information sets") {
  const GameTree t = build_game_tree("leduc");
  CHECK(t.num_infosets() == 936);
  CHECK(t.find_infoset("3|-|r|") >= 0);
  CHECK(t.find_infoset("0|4|cc|r") >= 0);
  CHECK(t.find_infoset("0|0|cc|") < 0);  // a card cannot be both private and public
  MESSAGE(fmt::format("leduc tree: {} nodes, {} decision nodes", t.num_nodes(), t.num_decision_nodes()));
}

TEST_CASE("Leduc's uniform policy has NashConv 4.747222 and always-first-legal 2.0") {
  const GameTree t = build_game_tree("leduc");
  CHECK(std::abs(exploitability(TabularPolicy::uniform(t)).nash_conv - 4.747222) < 1e-6);
  CHECK(std::abs(exploitability(TabularPolicy::first_legal(t)).nash_conv - 2.0) < 1e-9);
}

TEST_CASE("CFR+ on Leduc: NashConv at most 0.03 after 100 iterations and 0.001 after 1000") {
  const GameTree t = build_game_tree("leduc");
  TabularSolver s(t, {.algo = TabularAlgo::kCfrPlus});
  for (int i = 0; i < 100; ++i) s.run_iteration();
  const double at100 = exploitability(s.average_policy()).nash_conv;
  for (int i = 100; i < 1000; ++i) s.run_iteration();
  const double at1000 = exploitability(s.average_policy()).nash_conv;
  MESSAGE(fmt::format("CFR+ Leduc NashConv: {:.5f} at 100, {:.6f} at 1000", at100, at1000));
  CHECK(at100 <= 0.03);
  CHECK(at1000 <= 0.001);
  CHECK(expected_value(s.average_policy()) == Approx(-0.085606424).epsilon(0.002 / 0.0856));
}

TEST_CASE("the three full-width solvers follow the reference's Leduc curve") {
  const GameTree t = build_game_tree("leduc");
  struct Point {
    TabularAlgo algo;
    int iterations;
    double reference;
  };
  const Point points[] = {
      {TabularAlgo::kCfr, 10, 1.7772},        {TabularAlgo::kCfr, 100, 0.1914},       {TabularAlgo::kCfr, 300, 0.0710},
      {TabularAlgo::kCfr, 1000, 0.0236},      {TabularAlgo::kCfrPlus, 10, 1.2209},    {TabularAlgo::kCfrPlus, 100, 0.0268},
      {TabularAlgo::kCfrPlus, 300, 0.00453},  {TabularAlgo::kCfrPlus, 1000, 0.00050}, {TabularAlgo::kLinearCfr, 10, 1.4421},
      {TabularAlgo::kLinearCfr, 100, 0.0690}, {TabularAlgo::kLinearCfr, 300, 0.0272}, {TabularAlgo::kLinearCfr, 1000, 0.0114}};
  for (const TabularAlgo algo : {TabularAlgo::kCfr, TabularAlgo::kCfrPlus, TabularAlgo::kLinearCfr}) {
    TabularSolver s(t, {.algo = algo});
    for (const auto& pt : points) {
      if (pt.algo != algo) continue;
      while (s.iteration() < pt.iterations) s.run_iteration();
      const double nc = exploitability(s.average_policy()).nash_conv;
      MESSAGE(fmt::format("{} {} iterations: NashConv {:.5f} (reference {})", to_string(algo), pt.iterations, nc, pt.reference));
      // Up to 100 iterations the runs agree to the reference's printed digits (1%). Later the
      // dynamics are numerically chaotic: perturbing LCFR's regret weight by 1e-15 (relative)
      // moves NashConv at 300 iterations from 0.038 to 0.031 (docs/small-games.md), so there we
      // ask for agreement within 50%.
      CHECK(nc == Approx(pt.reference).epsilon(pt.iterations <= 100 ? 0.01 : 0.5));
    }
  }
}

// ES visits ~45 nodes per iteration on Leduc (a CFR iteration visits 19k): 20k iterations is
// about a million nodes. Measured over seeds 1–8: NashConv 0.34–0.40.
TEST_CASE("external-sampling MCCFR on Leduc falls below NashConv 0.5 within 20000 iterations") {
  const GameTree t = build_game_tree("leduc");
  CHECK(nash_conv_after(t, TabularAlgo::kExternalSampling, 20000, 2) < 0.5);
}

TEST_CASE("exploitability refuses undefined rows, rows that do not sum to 1 and mass on illegal actions") {
  const GameTree t = build_game_tree("leduc");
  const int root0 = t.find_infoset("0|-||");
  REQUIRE(root0 >= 0);
  {
    TabularPolicy p = TabularPolicy::uniform(t);
    p.row(root0)[1] = 0.0;
    p.row(root0)[2] = 0.0;  // undefined: an all-zero row
    CHECK_THROWS_WITH_AS(exploitability(p), doctest::Contains("'0|-||': probabilities sum to 0"), InputError);
  }
  {
    TabularPolicy p = TabularPolicy::uniform(t);
    p.row(root0)[1] = 0.6;  // 0.6 + 0.5
    CHECK_THROWS_WITH_AS(exploitability(p), doctest::Contains("sum to 1.1"), InputError);
  }
  {
    TabularPolicy p = TabularPolicy::uniform(t);
    p.row(root0)[0] = 0.5;  // fold is illegal when not facing a bet
    p.row(root0)[1] = 0.0;
    CHECK_THROWS_WITH_AS(exploitability(p), doctest::Contains("action 0 is illegal"), InputError);
  }
}

TEST_CASE("policy files round-trip, and a file missing an information set or with a bad key is refused") {
  const GameTree t = build_game_tree("kuhn");
  TabularSolver s(t, {.algo = TabularAlgo::kCfr});
  for (int i = 0; i < 50; ++i) s.run_iteration();
  const auto avg = s.average_policy();
  const std::string path = "kuhn_policy_test.json";
  write_policy_file(path, avg);
  const auto back = policy_from_rows(t, read_policy_file(path), path);
  for (int i = 0; i < t.num_infosets(); ++i)
    for (int a = 0; a < 2; ++a) CHECK(back.prob(i, a) == Approx(avg.prob(i, a)).epsilon(1e-12));
  auto file = read_policy_file(path);
  file.rows.pop_back();
  CHECK_THROWS_WITH_AS(policy_from_rows(t, file, path), doctest::Contains("1 information set(s) undefined"), InputError);
  file = read_policy_file(path);
  file.rows[0].first = "X|";
  CHECK_THROWS_WITH_AS(policy_from_rows(t, file, path), doctest::Contains("'X|' is not an information set of kuhn"), InputError);
  file = read_policy_file(path);
  file.rows[0].second.push_back(0.0);
  CHECK_THROWS_WITH_AS(policy_from_rows(t, file, path), doctest::Contains("has 3 entries; kuhn needs 2"), InputError);
  file = read_policy_file(path);
  file.game = "leduc";
  CHECK_THROWS_WITH_AS(policy_from_rows(t, file, path), doctest::Contains("policy is for game 'leduc'"), InputError);
  std::remove(path.c_str());
}

TEST_CASE("the sample average policy weighs a memory's samples by iteration, per information set") {
  const GameTree tree = build_game_tree("kuhn");
  const int W = tree.encoding_width(), A = tree.num_distinct_actions();
  REQUIRE(A == 2);
  ReservoirMemory mem(100, W, A, 1);
  const float pass[2] = {1.0F, 0.0F}, bet[2] = {0.0F, 1.0F};
  const ActionMask legal = tree.infoset(0).legal;
  mem.insert(tree.infoset_encoding(0), pass, legal, 1);
  mem.insert(tree.infoset_encoding(0), bet, legal, 3);
  mem.insert(tree.infoset_encoding(1), bet, tree.infoset(1).legal, 2);
  std::vector<float> unknown(static_cast<std::size_t>(W), 7.0F);  // no information set encodes so
  mem.insert(unknown.data(), pass, legal, 5);
  const TabularPolicy lin = sample_average_policy(tree, mem, true);
  CHECK(lin.prob(0, 0) == Approx(0.25));
  CHECK(lin.prob(0, 1) == Approx(0.75));
  CHECK(lin.prob(1, 1) == Approx(1.0));
  for (int i = 2; i < tree.num_infosets(); ++i) CHECK(lin.prob(i, 0) == Approx(0.5));  // no samples: uniform
  lin.validate("sample average");
  const TabularPolicy flat = sample_average_policy(tree, mem, false);
  CHECK(flat.prob(0, 0) == Approx(0.5));
  CHECK(flat.prob(1, 1) == Approx(1.0));
}

TEST_CASE("Leduc encodes ranks: suit-isomorphic information sets share an input and a sample average") {
  const GameTree tree = build_game_tree("leduc");
  const int W = tree.encoding_width(), A = tree.num_distinct_actions();
  auto index_of = [&](const std::string& key) {
    for (int i = 0; i < tree.num_infosets(); ++i)
      if (tree.infoset(i).key == key) return i;
    FAIL("no information set " << key);
    return -1;
  };
  auto same_input = [&](int a, int b) {
    return std::equal(tree.infoset_encoding(a), tree.infoset_encoding(a) + W, tree.infoset_encoding(b));
  };
  // J1 and J2 first to act; J1 and K1 differ; a pair (J2 on J1) differs from J2 on Q1.
  const int j1 = index_of("0|-||"), j2 = index_of("1|-||"), k1 = index_of("4|-||");
  CHECK(same_input(j1, j2));
  CHECK_FALSE(same_input(j1, k1));
  CHECK(same_input(index_of("1|0|cc|"), index_of("0|1|cc|")));
  CHECK(same_input(index_of("1|2|cc|"), index_of("0|3|cc|")));
  CHECK_FALSE(same_input(index_of("1|0|cc|"), index_of("1|2|cc|")));
  // Samples stored under J1's input count for J2 too (and K1 stays unsampled: uniform).
  ReservoirMemory mem(10, W, A, 1);
  const float call[3] = {0.0F, 1.0F, 0.0F}, raise[3] = {0.0F, 0.0F, 1.0F};
  mem.insert(tree.infoset_encoding(j1), call, tree.infoset(j1).legal, 1);
  mem.insert(tree.infoset_encoding(j2), raise, tree.infoset(j2).legal, 3);
  const TabularPolicy avg = sample_average_policy(tree, mem, true);
  for (int i : {j1, j2}) {
    CHECK(avg.prob(i, 1) == Approx(0.25));
    CHECK(avg.prob(i, 2) == Approx(0.75));
  }
  CHECK(avg.prob(k1, 1) == Approx(0.5));
  const std::vector<double> sums = sample_sums(tree, mem, false);
  CHECK(sums[static_cast<std::size_t>(j2 * A + 1)] == 1.0);
  CHECK(sums[static_cast<std::size_t>(j2 * A + 2)] == 1.0);
}
