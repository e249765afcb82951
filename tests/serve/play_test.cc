// cfr-serve's game room (apps/serve/play.h) with fake opponents: an opponent that throws ends its
// batch's games (500) and the server goes on; a slow opponent's batches are capped and each game is
// charged its own share of a batch's time; search priors are rounded to a few values; an
// opponent's slow event hook holds no game's lock.
#include <doctest/doctest.h>

#include <atomic>
#include <bit>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "apps/serve/play.h"
#include "engine/games/bots.h"

namespace cfr::serve {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

NewGameRequest request(std::string opponent, int seat, std::optional<std::uint64_t> seed = {},
                       std::optional<SearchRequest> search = {}) {
  NewGameRequest r;
  r.opponent = std::move(opponent);
  r.seat = seat;
  r.seed = seed;
  r.search = search;
  return r;
}

int first_legal(const lc::State& s) { return std::countr_zero(s.legal_mask()); }

struct FakeBot final : lc::Bot {
  bool throws = false;
  std::string_view name() const noexcept override { return "fake"; }
  bool deterministic() const noexcept override { return true; }
  int choose_action(const lc::State& s, Rng&) override {
    if (throws) throw std::runtime_error("failure reading /secret/server/path");
    return first_legal(s);
  }
};

struct FakeBatch final : lc::BatchBot {
  bool throws = false;
  std::chrono::milliseconds per_state{0};
  std::chrono::milliseconds start_delay{0};  // game_started takes this long (counting in `starting`)
  std::shared_ptr<std::atomic<int>> starting;
  std::string_view name() const noexcept override { return "fake batch"; }
  void game_started(int, int, std::uint64_t) override {
    if (start_delay.count() == 0) return;
    ++*starting;
    std::this_thread::sleep_for(start_delay);
  }
  void choose_actions(std::span<const lc::State* const> states, std::span<Rng* const>, std::span<const int>,
                      std::span<int> actions) override {
    if (throws) throw std::bad_alloc();
    std::this_thread::sleep_for(per_state * static_cast<long>(states.size()));
    for (std::size_t i = 0; i < states.size(); ++i) actions[i] = first_legal(*states[i]);
  }
};

/// The answers the room gave, by the order of the requests.
struct Answers {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::pair<int, json>> got;
  GameRoom::Done done(std::size_t k) {
    {
      std::lock_guard lock(mu);
      if (got.size() <= k) got.resize(k + 1, {0, json()});
    }
    return [this, k](int status, json body) {
      std::lock_guard lock(mu);
      got[k] = {status, std::move(body)};
      cv.notify_all();
    };
  }
  /// Waits for answer k (up to 30 s); its status (0: none came).
  std::pair<int, json> wait(std::size_t k) {
    std::unique_lock lock(mu);
    cv.wait_for(lock, 30s, [&] { return got[k].first != 0; });
    return got[k];
  }
};

struct Made {
  std::mutex mu;
  std::vector<std::string> specs;
  std::shared_ptr<std::atomic<int>> starting = std::make_shared<std::atomic<int>>(0);  // slow game_started calls begun
};

GameRoom make_room(PlayOptions opts, std::shared_ptr<Made> made) {
  auto factory = [made](const std::string& spec) {
    {
      std::lock_guard lock(made->mu);
      made->specs.push_back(spec);
    }
    lc::AnyPlayer p;
    if (spec == "bot" || spec == "throwing bot") {
      auto b = std::make_unique<FakeBot>();
      b->throws = spec == "throwing bot";
      p.bot = std::move(b);
    } else {
      auto b = std::make_unique<FakeBatch>();
      b->throws = spec == "throwing batch";
      if (spec == "slow batch") b->per_state = 150ms;
      if (spec == "slow start batch") {
        b->start_delay = 3s;
        b->starting = made->starting;
      }
      p.batch = std::move(b);
    }
    return p;
  };
  auto resolve = [](const std::string& id) {
    if (id == "net") return Offer{.id = id, .label = id, .kind = "model", .spec = "checkpoint:/x", .network = true};
    return Offer{.id = id, .label = id, .kind = "extra", .spec = id, .slow = id.starts_with("slow")};
  };
  return GameRoom(std::move(opts), factory, resolve);
}

TEST_CASE("serve room: an opponent that throws ends its batch's games with 500 and the server goes on") {
  auto made = std::make_shared<Made>();
  GameRoom room = make_room(PlayOptions{}, made);
  Answers a;
  std::size_t k = 0;
  for (const std::string opp : {"throwing bot", "throwing batch"}) {
    // The opponent moves first (seat 1): its move throws.
    room.create(request(opp, 1), "client", a.done(k));
    const auto [status, body] = a.wait(k++);
    CHECK(status == 500);
    const std::string error = body.value("error", "");
    CHECK(error.find("failed") != std::string::npos);
    CHECK(error.find("/secret") == std::string::npos);  // no server path in an answer
    // Again: the player is made anew, fails again, and is answered again.
    room.create(request(opp, 1), "client", a.done(k));
    CHECK(a.wait(k++).first == 500);
  }
  CHECK(room.stats().opponent_failures == 4);
  {
    std::lock_guard lock(made->mu);
    CHECK(made->specs.size() == 4);  // each failure resets the player
  }
  // Other opponents are served as before.
  room.create(request("bot", 1), "client", a.done(k));
  const auto [status, body] = a.wait(k);
  CHECK(status == 201);
  CHECK(body["last_opponent_moves"].size() >= 1);
}

TEST_CASE("serve room: a person's move into an opponent that throws is answered 500 and the game is ended") {
  GameRoom room = make_room(PlayOptions{}, std::make_shared<Made>());
  Answers a;
  room.create(request("throwing bot", 0), "client", a.done(0));
  const auto [status, view] = a.wait(0);
  REQUIRE(status == 201);
  const std::string id = view["id"];
  // The person plays and draws; then the opponent is to move, and throws.
  json v = view;
  int last = 0;
  for (std::size_t k = 1; k < 4 && last != 500; ++k) {
    REQUIRE(!v["legal"].empty());
    room.move(id, v["legal"][0]["id"].get<int>(), a.done(k));
    std::tie(last, v) = a.wait(k);
  }
  CHECK(last == 500);
  v = room.view(id);
  CHECK(v.contains("ended"));
  CHECK(v["legal"].empty());
}

TEST_CASE("serve room: a slow opponent's batches hold at most 4 games and each is charged its share of the time") {
  PlayOptions opts;
  opts.move_budget = 400ms;  // a batch of 4 takes 600 ms, 150 ms a game
  GameRoom room = make_room(opts, std::make_shared<Made>());
  Answers a;
  constexpr std::size_t kGames = 9;
  for (std::size_t k = 0; k < kGames; ++k) room.create(request("slow batch", 1, k), "client", a.done(k));
  std::size_t created = 0;
  for (std::size_t k = 0; k < kGames; ++k) {
    const auto [status, body] = a.wait(k);
    created += status == 201;
    CHECK_MESSAGE(status == 201, body.dump());
  }
  CHECK(created == kGames);
  const auto st = room.stats();
  CHECK(st.largest_batch <= 4);
  CHECK(st.over_budget == 0);
}

TEST_CASE("serve room: an opponent's event hook that takes seconds holds no game's lock: the room goes on meanwhile") {
  auto made = std::make_shared<Made>();
  GameRoom room = make_room(PlayOptions{}, made);
  Answers a;
  room.create(request("slow start batch", 0), "client", a.done(0));  // the person moves first: only its start is told
  for (int i = 0; i < 1000 && made->starting->load() == 0; ++i) std::this_thread::sleep_for(10ms);
  REQUIRE(made->starting->load() == 1);
  // What the I/O thread does (here: look for idle games) takes each game's lock: it does not wait
  // for the opponent's game_started (3 s).
  const auto t0 = std::chrono::steady_clock::now();
  room.expire_idle();
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK_MESSAGE(took < 1.0, "expire_idle took ", took, " s");
  CHECK(room.live_games() == 1);
  const auto [status, view] = a.wait(0);
  CHECK(status == 201);
  CHECK(view["legal"].size() >= 1);  // the person's turn
}

TEST_CASE("serve room: search priors are rounded to a few values, so nearby priors share one opponent") {
  CHECK(rounded_prior(20) == 20);
  CHECK(rounded_prior(19.37) == 20);
  CHECK(rounded_prior(0.01) == 0);
  CHECK(rounded_prior(-3) == 0);
  CHECK(rounded_prior(0.12) == doctest::Approx(0.1));
  CHECK(rounded_prior(70) == 50);
  CHECK(rounded_prior(1000) == 1000);
  CHECK(rounded_prior(999.9) == 1000);
  auto made = std::make_shared<Made>();
  GameRoom room = make_room(PlayOptions{}, made);
  Answers a;
  const double priors[] = {19.9, 20.3, 21.123456, 18.5};
  for (std::size_t k = 0; k < 4; ++k) {
    room.create(request("net", 0, {}, SearchRequest{.prior = priors[k]}), "client", a.done(k));
    CHECK(a.wait(k).first == 201);
  }
  std::lock_guard lock(made->mu);
  REQUIRE(made->specs.size() == 1);  // one opponent (one load) for the four
  CHECK(made->specs[0].ends_with("prior=20"));
}

}  // namespace
}  // namespace cfr::serve
