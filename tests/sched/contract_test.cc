// The scheduler contract, run against every registered scheduler (sched/scheduler.h).
#include <doctest/doctest.h>

#include <fmt/format.h>

#include <atomic>
#include <limits>
#include <stdexcept>

#include "tests/sched/helpers.h"
#include "tests/sched/one_at_a_time.h"

using namespace cfr;
using namespace cfr::testing;

namespace {

struct Variant {
  std::string scheduler;
  SchedulerOptions config;  // the options of the profile the scheduler declares
  std::string label() const { return fmt::format("{} {{{}}}", scheduler, config.describe()); }
};

std::vector<Variant> variants() {
  register_builtin_schedulers();
  register_test_scheduler();  // a scheduler written in the tests goes through the whole suite too
  std::vector<Variant> v;
  for (const auto& name : scheduler_names()) {
    v.push_back({name, declared_options(name, {{"window", 64}, {"max_batch", 128}, {"threads", 1}})});
    v.push_back({name, declared_options(name, {{"window", 7}, {"max_batch", 5}, {"threads", 2}})});
    v.push_back({name, declared_options(name, {{"window", 33}, {"max_batch", 1}, {"threads", 3}, {"deadline_us", 50}})});
  }
  return v;
}

template <class G>
void check_identical_samples(const G& game, const TraversalOptions& opts, int traversals) {
  const Nets nets = hash_nets(game.input_width(), game.num_actions());
  const TraversalJob job = make_job(game, opts, traversals, 3, 1);
  CollectingSink reference(game.input_width(), game.num_actions());
  register_builtin_schedulers();
  make_scheduler("recursive", {})->run(job, nets.span(), reference);
  REQUIRE(reference.advantage.size() > 0);
  REQUIRE(reference.strategy.size() > 0);
  for (const auto& v : variants()) {
    INFO(v.label());
    CollectingSink got(game.input_width(), game.num_actions());
    const RunStats st = make_scheduler(v.scheduler, v.config)->run(job, nets.span(), got);
    CHECK(st.traversals == traversals);
    CHECK(st.nodes == reference.nodes);
    CHECK(st.batch.requests == st.nodes);  // one query per non-terminal node with the network opponent
    CHECK(st.batch.max_batch_seen() <= option_or(v.config, "max_batch", 128));
    std::vector<int> expected_order(static_cast<std::size_t>(traversals));
    for (int i = 0; i < traversals; ++i) expected_order[static_cast<std::size_t>(i)] = i;
    CHECK(got.order == expected_order);
    CHECK(same_samples(got.advantage, reference.advantage));
    CHECK(same_samples(got.strategy, reference.strategy));
    CHECK(got.digest.value() == reference.digest.value());
  }
}

// An evaluator that fails on its n-th call.
class FailingEvaluator final : public Evaluator {
 public:
  FailingEvaluator(int in_w, int out_w, int fail_at) : inner_(in_w, out_w), fail_at_(fail_at) {}
  EvaluatorInfo info() const override { return inner_.info(); }
  void evaluate(std::span<const float> in, std::span<const ActionMask> legal, std::span<float> out) override {
    if (++calls_ == fail_at_) throw std::runtime_error("evaluator failed on purpose");
    inner_.evaluate(in, legal, out);
  }

 private:
  HashEvaluator inner_;
  int fail_at_;
  std::atomic<int> calls_{0};
};

// Lost Cities whose apply() throws at a given move of a given traversal.
struct ThrowingGame : LostCitiesTraversalGame {
  int bad_traversal = 5;
  int bad_move = 40;
  void apply(State& s, int a, Rng& r) const {
    if (s.move_count() == bad_move && current_index == bad_traversal) throw std::logic_error("traversal failed on purpose");
    LostCitiesTraversalGame::apply(s, a, r);
  }
  static thread_local int current_index;
};
thread_local int ThrowingGame::current_index = -1;

class ThrowingSink final : public SampleSink {
 public:
  void consume(const TraversalContext& ctx) override {
    if (ctx.index == 4) throw std::runtime_error("sink failed on purpose");
  }
};

class StoppingSink final : public SampleSink {
 public:
  explicit StoppingSink(std::atomic<bool>& stop) : stop_(stop) {}
  void consume(const TraversalContext&) override {
    if (++count == 3) stop_ = true;
  }
  int count = 0;

 private:
  std::atomic<bool>& stop_;
};

}  // namespace

TEST_CASE("every scheduler produces bitwise identical Lost Cities samples whatever its window, threads or batch limit") {
  LostCitiesTraversalGame game;
  TraversalOptions opts;
  opts.opponent = OpponentPolicy::kAverageStrategy;
  check_identical_samples(game, opts, 40);
}

TEST_CASE("every scheduler produces identical samples for external sampling on Leduc") {
  SmallTraversalGame<leduc::State> game;
  TraversalOptions opts{.kind = TraversalKind::kExternalSampling};
  check_identical_samples(game, opts, 60);
}

TEST_CASE("every scheduler produces identical samples with the network opponent and uniform fallback") {
  LostCitiesTraversalGame game;
  TraversalOptions opts{.max_nodes = 300, .opponent = OpponentPolicy::kNetwork, .fallback = RmFallback::kUniform};
  check_identical_samples(game, opts, 25);
}

TEST_CASE("an evaluator exception ends every scheduler's run cleanly with its cause") {
  LostCitiesTraversalGame game;
  TraversalOptions opts;
  const TraversalJob job = make_job(game, opts, 30);
  for (const auto& v : variants()) {
    INFO(v.label());
    Nets nets = hash_nets(game.input_width(), game.num_actions());
    FailingEvaluator bad(game.input_width(), game.num_actions(), 3);
    nets.ptrs[kAdvantageNet0] = &bad;
    CollectingSink sink(game.input_width(), game.num_actions());
    CHECK_THROWS_WITH_AS(make_scheduler(v.scheduler, v.config)->run(job, nets.span(), sink), "evaluator failed on purpose",
                         std::runtime_error);
  }
}

TEST_CASE("a traversal exception ends every scheduler's run cleanly with its cause") {
  ThrowingGame game;
  TraversalOptions opts;
  TraversalJob job = make_job(game, opts, 12);
  job.start = [&game, &opts](TraversalContext& ctx) {
    ThrowingGame::current_index = ctx.index;  // read on the thread that starts it, which also runs it
    return traverse(ctx, game, opts);
  };
  for (const auto& v : variants()) {
    INFO(v.label());
    const Nets nets = hash_nets(game.input_width(), game.num_actions());
    CollectingSink sink(game.input_width(), game.num_actions());
    // thread_local index is only reliable when a thread runs one traversal at a time
    SchedulerOptions one = v.config;
    if (option_or(one, "window", 0) > 0) one.set("window", option_or(one, "threads", 1));
    CHECK_THROWS_WITH_AS(make_scheduler(v.scheduler, one)->run(job, nets.span(), sink), "traversal failed on purpose",
                         std::logic_error);
  }
}

TEST_CASE("a sink exception ends every scheduler's run cleanly with its cause") {
  LostCitiesTraversalGame game;
  TraversalOptions opts;
  const TraversalJob job = make_job(game, opts, 20);
  for (const auto& v : variants()) {
    INFO(v.label());
    const Nets nets = hash_nets(game.input_width(), game.num_actions());
    ThrowingSink sink;
    CHECK_THROWS_WITH_AS(make_scheduler(v.scheduler, v.config)->run(job, nets.span(), sink), "sink failed on purpose",
                         std::runtime_error);
  }
}

TEST_CASE("every scheduler refuses a job whose traversal indices pass 2^31 - 1, before any traversal") {
  LostCitiesTraversalGame game;
  TraversalOptions opts;
  TraversalJob job = make_job(game, opts, 2);
  job.first_index = std::numeric_limits<int>::max();  // first_index + 1 wrapped to -2^31
  for (const auto& v : variants()) {
    INFO(v.label());
    const Nets nets = hash_nets(game.input_width(), game.num_actions());
    CollectingSink sink(game.input_width(), game.num_actions());
    CHECK_THROWS_WITH_AS(make_scheduler(v.scheduler, v.config)->run(job, nets.span(), sink),
                         "traversal job: first_index + num_traversals = 2147483649 is beyond 2^31 - 1 (32-bit indices)",
                         InputError);
    CHECK(sink.order.empty());  // no traversal reached the sink
  }
}

TEST_CASE("stopping mid-run ends every scheduler early, leaking nothing") {
  LostCitiesTraversalGame game;
  TraversalOptions opts;
  const TraversalJob job = make_job(game, opts, 200);
  for (const auto& v : variants()) {
    INFO(v.label());
    const Nets nets = hash_nets(game.input_width(), game.num_actions());
    std::atomic<bool> stop{false};
    StoppingSink sink(stop);
    const RunStats st = make_scheduler(v.scheduler, v.config)->run(job, nets.span(), sink, &stop);
    CHECK(st.stopped);
    CHECK(sink.count < 200);
  }
}

TEST_CASE("the scheduler registry lists the built-ins, rejects unknown names and accepts user schedulers") {
  register_builtin_schedulers();
  const auto names = scheduler_names();
  for (const char* n : {"recursive", "interleaved", "pooled", "waves"})
    CHECK(std::find(names.begin(), names.end(), n) != names.end());
  CHECK_THROWS_WITH_AS(make_scheduler("fifo", {}), doctest::Contains("unknown scheduler 'fifo'; registered schedulers:"),
                       InputError);
  CHECK_THROWS_WITH_AS(make_scheduler("interleaved", {{"window", 0}}),
                       doctest::Contains("scheduler 'interleaved': window = 0 is out of range [1, 1048576]"), InputError);
  CHECK_THROWS_WITH_AS(make_scheduler("interleaved", {{"threads", 2}}),
                       doctest::Contains("scheduler 'interleaved' has no option 'threads'; its options: window, max_batch"),
                       InputError);
  CHECK_THROWS_WITH_AS(make_scheduler("recursive", {{"window", 4}}),
                       doctest::Contains("scheduler 'recursive' has no option 'window'; its options: (none)"), InputError);
  // Each scheduler declares what it reads, with defaults.
  const auto pooled = scheduler_options("pooled");
  std::vector<std::string> declared;
  for (const auto& o : pooled) declared.push_back(o.name);
  CHECK(declared == std::vector<std::string>{"threads", "window", "max_batch", "deadline_us"});
  CHECK(scheduler_options("recursive").empty());
  CHECK(scheduler_options("no_such_scheduler").empty());
}

TEST_CASE("interleaved batches stay near the window and recursive batches are single requests") {
  LostCitiesTraversalGame game;
  TraversalOptions opts;
  const TraversalJob job = make_job(game, opts, 300);
  const Nets nets = hash_nets(game.input_width(), game.num_actions());
  register_builtin_schedulers();
  CollectingSink a(game.input_width(), game.num_actions()), b(game.input_width(), game.num_actions());
  const RunStats inter = make_scheduler("interleaved", {{"window", 64}, {"max_batch", 128}})->run(job, nets.span(), a);
  const RunStats rec = make_scheduler("recursive", {})->run(job, nets.span(), b);
  MESSAGE(fmt::format("interleaved window 64: mean batch {:.1f}; recursive: {:.1f}", inter.batch.mean_batch(),
                      rec.batch.mean_batch()));
  CHECK(rec.batch.mean_batch() == 1.0);
  // Two networks share the window (advantage of the traverser, strategy of the opponent).
  CHECK(inter.batch.mean_batch() >= 0.9 * 64 / 2);
}

TEST_CASE("a job's share of the traversals (first_index) reproduces those traversals of the whole job, in order") {
  LostCitiesTraversalGame game;
  TraversalOptions opts;
  register_builtin_schedulers();
  const TraversalJob whole = make_job(game, opts, 24);
  const Nets nets = hash_nets(game.input_width(), game.num_actions());
  CollectingSink all(game.input_width(), game.num_actions());
  make_scheduler("interleaved", {{"window", 8}})->run(whole, nets.span(), all);
  // Three shares, as three ranks of a distributed run would take them, concatenated in order.
  SampleDigest adv, strat;
  for (const auto& [first, n] : std::vector<std::pair<int, int>>{{0, 8}, {8, 7}, {15, 9}}) {
    TraversalJob share = whole;
    share.first_index = first;
    share.num_traversals = n;
    // The reference share: samples of traversals [first, first + n) of the whole job, the first
    // first + n traversals less the first `first` (computed once per share, not per variant).
    CollectingSink again(game.input_width(), game.num_actions());
    TraversalJob prefix = whole;
    prefix.num_traversals = first + n;
    make_scheduler("recursive", {})->run(prefix, nets.span(), again);
    CollectingSink head(game.input_width(), game.num_actions());
    TraversalJob before = whole;
    before.num_traversals = first;
    if (first > 0) make_scheduler("recursive", {})->run(before, nets.span(), head);
    for (const auto& v : variants()) {
      INFO(v.label());
      CollectingSink part(game.input_width(), game.num_actions());
      make_scheduler(v.scheduler, v.config)->run(share, nets.span(), part);
      CHECK(again.advantage.size() - head.advantage.size() == part.advantage.size());
      CHECK(again.strategy.size() - head.strategy.size() == part.strategy.size());
      CHECK(std::equal(part.advantage.targets.begin(), part.advantage.targets.end(),
                       again.advantage.targets.begin() + static_cast<std::ptrdiff_t>(head.advantage.targets.size())));
      CHECK(std::equal(part.strategy.inputs.begin(), part.strategy.inputs.end(),
                       again.strategy.inputs.begin() + static_cast<std::ptrdiff_t>(head.strategy.inputs.size())));
    }
    CollectingSink part(game.input_width(), game.num_actions());
    make_scheduler("interleaved", {{"window", 4}})->run(share, nets.span(), part);
    adv.add(part.advantage);
    strat.add(part.strategy);
  }
  SampleDigest whole_adv, whole_strat;
  whole_adv.add(all.advantage);
  whole_strat.add(all.strategy);
  CHECK(adv.value() == whole_adv.value());
  CHECK(strat.value() == whole_strat.value());
}
