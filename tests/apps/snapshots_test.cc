// Single Deep CFR's snapshots (apps/run/snapshots.h): the file format's checks, and the
// exact snapshot average on Kuhn computed by hand.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "apps/players/evaluation.h"
#include "apps/run/snapshots.h"
#include "engine/core/errors.h"
#include "engine/games/kuhn.h"
#include "engine/tabular/game_tree.h"
#include "sched/evaluator.h"

using namespace cfr;
namespace fs = std::filesystem;

TEST_CASE("snapshot files round-trip and refuse truncation, corruption and another size") {
  const std::string dir = (fs::temp_directory_path() / "cfr_snapshots_test").string();
  fs::remove_all(dir);
  const std::vector<float> w = {1.5F, -2.0F, 3.25F};
  write_snapshot(dir, 7, w);
  write_snapshot(dir, 12, w);
  const auto list = list_snapshots(dir);
  REQUIRE(list.size() == 2);
  CHECK(list[0].first == 7);
  CHECK(list[1].first == 12);
  CHECK(read_snapshot(list[0].second, 3) == w);
  CHECK_THROWS_WITH_AS(read_snapshot(list[0].second, 4), doctest::Contains("3 weights, the run's advantage networks have 4"),
                       InputError);
  {  // one flipped bit in a weight
    std::fstream f(list[0].second, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(25);
    f.put('\x7f');
  }
  CHECK_THROWS_WITH_AS(read_snapshot(list[0].second), doctest::Contains("checksum mismatch"), InputError);
  fs::resize_file(list[1].second, 30);
  CHECK_THROWS_WITH_AS(read_snapshot(list[1].second), doctest::Contains("truncated or changed"), InputError);
  trim_snapshots(dir, 10);
  REQUIRE(list_snapshots(dir).size() == 1);
  CHECK(list_snapshots(dir)[0].first == 7);
  fs::remove_all(dir);
}

TEST_CASE("the snapshot average weights each iteration's policy by its own reach (Kuhn, by hand)") {
  const GameTree tree = GameTree::build<kuhn::State>("kuhn");
  const int W = tree.encoding_width(), A = tree.num_distinct_actions();
  // Snapshot 1 (weight 1): no regrets anywhere, so uniform play. Snapshot 2 (weight 2): regret
  // only for pass, so pass always.
  TabularEvaluator none(W, A), pass(W, A);
  const float pass_regret[2] = {1.0F, 0.0F};
  for (int i = 0; i < tree.num_infosets(); ++i) pass.add(tree.infoset_encoding(i), pass_regret);
  std::vector<double> sums;
  add_snapshot_policy(tree, none, none, 1.0, RmFallback::kUniform, 1e-9, sums);
  add_snapshot_policy(tree, pass, pass, 2.0, RmFallback::kUniform, 1e-9, sums);
  const TabularPolicy avg = snapshot_average_policy(tree, sums);
  int checked_first = 0, checked_second = 0;
  for (int i = 0; i < tree.num_infosets(); ++i) {
    const std::string& key = tree.infoset(i).key;
    if (key.ends_with("|pb")) {  // player 0 again after passing: own reach 0.5 under uniform, 1 under pass
      CHECK(avg.prob(i, kuhn::kPass) == doctest::Approx((1 * 0.5 * 0.5 + 2 * 1.0 * 1.0) / (1 * 0.5 + 2 * 1.0)));
      ++checked_second;
    } else {  // a first decision: own reach 1 under both
      CHECK(avg.prob(i, kuhn::kPass) == doctest::Approx((1 * 0.5 + 2 * 1.0) / 3.0));
      ++checked_first;
    }
  }
  CHECK(checked_second == 3);
  CHECK(checked_first == 9);
}
