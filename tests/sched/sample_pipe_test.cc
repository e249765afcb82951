#include <doctest/doctest.h>

#include <chrono>
#include <thread>

#include "tests/sched/helpers.h"

using namespace cfr;
using namespace cfr::testing;

TEST_CASE("the sample pipe delivers every traversal in order and applies back-pressure with bounded memory") {
  LostCitiesTraversalGame game;
  const TraversalOptions opts;
  const Nets nets = hash_nets(game.input_width(), game.num_actions());
  std::vector<int> seen;
  std::int64_t adv = 0;
  SamplePipe pipe(game.input_width(), game.num_actions(), {.capacity_blocks = 2, .block_samples = 50}, [&](const SampleBlock& b) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));  // a slow trainer
    for (int i = b.first_traversal; i <= b.last_traversal; ++i) seen.push_back(i);
    adv += b.advantage.size();
  });
  register_builtin_schedulers();
  const RunStats st =
      make_scheduler("pooled", {{"window", 16}, {"threads", 2}})->run(make_job(game, opts, 80), nets.span(), pipe);
  pipe.flush();
  std::vector<int> expected(80);
  for (int i = 0; i < 80; ++i) expected[static_cast<std::size_t>(i)] = i;
  CHECK(seen == expected);
  CHECK(adv == pipe.stats().advantage_samples);
  CHECK(pipe.stats().producer_wait_seconds > 0);  // the fast producer was held back
  CHECK(pipe.stats().max_queued <= 2);
  CHECK(pipe.blocks_allocated() <= 2 + 2);
  CHECK(st.traversals == 80);
}

TEST_CASE("a consumer exception reaches the producer") {
  LostCitiesTraversalGame game;
  const TraversalOptions opts;
  const Nets nets = hash_nets(game.input_width(), game.num_actions());
  SamplePipe pipe(game.input_width(), game.num_actions(), {.capacity_blocks = 1, .block_samples = 10},
                  [&](const SampleBlock&) { throw std::runtime_error("trainer failed"); });
  register_builtin_schedulers();
  CHECK_THROWS_WITH_AS(
      {
        make_scheduler("interleaved", {})->run(make_job(game, opts, 50), nets.span(), pipe);
        pipe.flush();
      },
      "trainer failed", std::runtime_error);
}
