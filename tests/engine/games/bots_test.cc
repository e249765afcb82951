#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "engine/core/errors.h"
#include "engine/games/bots.h"
#include "engine/games/expert_bot.h"
#include "engine/games/match.h"

using namespace cfr::lc;
using cfr::Rng;
using doctest::Approx;

TEST_CASE("rule-bot thresholds derive the bracketed values of the reference for default rules") {
  const Rules r;
  const auto b = HeuristicThresholds::derive(r, HeuristicParams::balanced());
  const auto a = HeuristicThresholds::derive(r, HeuristicParams::aggressive());
  const auto c = HeuristicThresholds::derive(r, HeuristicParams::cautious());
  CHECK(b.m == 5);
  CHECK(b.M == 54);
  CHECK(b.top == 11);
  CHECK(b.L == 12);
  CHECK(b.D == 21);
  CHECK(b.T == 16);
  CHECK(a.T == 16);
  CHECK(c.T == 16);
  CHECK(b.min_open == 3);
  CHECK(a.min_open == 2);
  CHECK(c.min_open == 4);
  CHECK(b.wager_min == 3);
  CHECK(a.wager_min == 2);
  CHECK(c.wager_min == 4);
  CHECK(b.wager_sum == Approx(18.4));
  CHECK(a.wager_sum == Approx(16));
  CHECK(c.wager_sum == Approx(21.6));
  CHECK(b.block == 12);
  CHECK(a.block == 7);
  CHECK(c.block == 18);
  CHECK(b.bonus_possible);
}

TEST_CASE("rule-bot thresholds for the small rules round half to even") {
  const Rules r{.n_colors = 3, .n_ranks = 6, .n_handshakes = 2, .hand_size = 5};
  const auto b = HeuristicThresholds::derive(r, HeuristicParams::balanced());
  const auto a = HeuristicThresholds::derive(r, HeuristicParams::aggressive());
  const auto c = HeuristicThresholds::derive(r, HeuristicParams::cautious());
  CHECK(b.m == 3);
  CHECK(b.M == 27);
  CHECK(b.top == 8);
  CHECK(b.L == 5);
  CHECK(b.D == 8);
  CHECK(b.T == Approx(13.5));
  CHECK(b.min_open == 2);
  CHECK(b.wager_min == 2);
  CHECK(b.wager_sum == Approx(15.525));
  CHECK(b.block == 5);
  CHECK(a.T == Approx(11.34));
  CHECK(a.min_open == 2);  // 1.5 → 2
  CHECK(a.wager_min == 1);
  CHECK(a.block == 3);
  CHECK(c.T == Approx(16));
  CHECK(c.min_open == 2);  // 2.5 → 2
  CHECK(c.wager_min == 2);
  CHECK(c.block == 7);
}

TEST_CASE("every bot always chooses a legal action, on every rule set tried") {
  for (const Rules& r : {Rules{}, Rules{.n_colors = 3, .n_ranks = 6, .n_handshakes = 2, .hand_size = 5},
                         Rules{.n_colors = 7, .n_ranks = 12, .n_handshakes = 0, .hand_size = 12, .bonus_threshold = 3}}) {
    for (const auto& name : bot_names()) {
      auto bot = make_bot(name, r);
      Rng rng(3);
      for (int g = 0; g < 20; ++g) {
        State s = State::deal(r, static_cast<std::uint64_t>(g));
        for (int step = 0; step < 2000 && !s.is_terminal(); ++step) {
          const int a = bot->choose_action(s, rng);
          INFO(name, " game ", g, " step ", step);
          REQUIRE(cfr::mask_has(s.legal_mask(), a));
          s.apply_action(a);
        }
      }
    }
  }
}

TEST_CASE("deterministic bots ignore the rng and the noisy bot depends on it") {
  const Rules r;
  const State s = State::deal(r, 11);
  for (const auto& name : bot_names()) {
    auto bot = make_bot(name, r);
    CHECK(bot->name() == name);
    if (!bot->deterministic()) continue;
    Rng a(1), b(2);
    CHECK(bot->choose_action(s, a) == bot->choose_action(s, b));
  }
  CHECK_FALSE(make_bot("heuristic_noisy", r)->deterministic());
  CHECK_FALSE(make_bot("random", r)->deterministic());
}

TEST_CASE("an unknown bot name is an error listing the valid bots") {
  CHECK_THROWS_WITH_AS(make_bot("alphazero", Rules{}),
                       doctest::Contains("unknown bot 'alphazero'; valid bots: random, discard_only"), cfr::InputError);
}

TEST_CASE("matches play each deal twice with the seats swapped, and are reproducible from their seed") {
  auto a = make_bot("random", Rules{});
  auto b = make_bot("random", Rules{});
  const auto r1 = run_match(*a, *b, {.games = 50, .seed = 9});
  const auto r2 = run_match(*a, *b, {.games = 50, .seed = 9});
  CHECK(r1.wins == r2.wins);
  CHECK(r1.diff_sum == r2.diff_sum);
  CHECK(r1.length_sum == r2.length_sum);
  CHECK(r1.wins + r1.losses + r1.draws == 50);
  // Seats alternate; games 2d and 2d + 1 are dealt with seed + d (duplicate deals), or game k
  // with seed + k under the reference's protocol.
  struct Recorder final : Bot {
    std::unique_ptr<Bot> inner = make_bot("random", Rules{});
    std::vector<int> seats;
    std::vector<State> openings;
    std::string_view name() const noexcept override { return "recorder"; }
    bool deterministic() const noexcept override { return false; }
    int choose_action(const State& s, Rng& rng) override {
      if (s.move_count() <= 3) seats.push_back(s.current_player());
      if (s.move_count() == 0) openings.push_back(s);
      return inner->choose_action(s, rng);
    }
  };
  {
    Recorder rec, other;
    (void)run_match(rec, other, {.games = 4, .seed = 100});
    CHECK(rec.seats == std::vector<int>{0, 0, 1, 1, 0, 0, 1, 1});
    // bot 0 opens games 0 and 2 (seat 0), bot 1 games 1 and 3: the same two deals, seats swapped.
    REQUIRE(rec.openings.size() == 2);
    REQUIRE(other.openings.size() == 2);
    CHECK(rec.openings[0] == State::deal(Rules{}, 100));
    CHECK(other.openings[0] == State::deal(Rules{}, 100));
    CHECK(rec.openings[1] == State::deal(Rules{}, 101));
    CHECK(other.openings[1] == State::deal(Rules{}, 101));
  }
  {
    Recorder rec, other;
    (void)run_match(rec, other, {.games = 4, .seed = 100, .duplicate = false});
    CHECK(rec.seats == std::vector<int>{0, 0, 1, 1, 0, 0, 1, 1});
    REQUIRE(rec.openings.size() == 2);
    CHECK(rec.openings[0] == State::deal(Rules{}, 100));
    CHECK(rec.openings[1] == State::deal(Rules{}, 102));
    REQUIRE(other.openings.size() == 2);
    CHECK(other.openings[0] == State::deal(Rules{}, 101));
  }
}

TEST_CASE("the report's intervals match hand-computed values") {
  // Wilson 95%: 7 wins in 10 → centre (0.7 + 1.92/10) / 1.384, half-width 1.96·sqrt(0.021 + 0.0096)/1.384.
  const Interval w = wilson_interval(7, 10);
  CHECK(w.lo == doctest::Approx(0.396778).epsilon(1e-5));
  CHECK(w.hi == doctest::Approx(0.892208).epsilon(1e-5));
  CHECK(wilson_interval(0, 20).lo == 0.0);
  CHECK(wilson_interval(0, 20).hi == doctest::Approx(0.161125).epsilon(1e-5));
  CHECK(wilson_interval(20, 20).hi == 1.0);
  // Duplicate deals: the standard error comes from the per-deal means (a deal's two games are one
  // observation). Diffs (+10, −10) and (+30, +10) → deal means 0 and 20 → sd 14.142 → se 10.
  MatchReport r;
  r.games = 4;
  r.diffs = {10, -10, 30, 10};
  r.played = {true, true, true, true};
  r.diff_sum = 40;
  r.diff_sq_sum = 100 + 100 + 900 + 100;
  CHECK(r.se_diff() == doctest::Approx(10.0));
  r.duplicate = false;  // four independent games: sd 16.33 / 2
  CHECK(r.se_diff() == doctest::Approx(std::sqrt((1200.0 - 4 * 100.0) / 3) / 2));
}

TEST_CASE("a match counts the expeditions each side opens") {
  auto a = make_bot("discard_only", Rules{});
  auto b = make_bot("heuristic_balanced", Rules{});
  const auto r = run_match(*a, *b, {.games = 20, .seed = 5});
  CHECK(r.avg_opened0() == 0.0);  // discard_only never plays a card
  CHECK(r.avg_opened1() >= 2.0);
  CHECK(r.avg_opened1() <= Rules{}.n_colors);
  CHECK(r.se_diff() > 0.0);
  CHECK(r.win_interval().lo <= r.win_rate());
  CHECK(r.win_interval().hi >= r.win_rate());
}

TEST_CASE("an action cap stops a match game and scores it as is") {
  auto a = make_bot("random", Rules{});
  const auto r = run_match(*a, *a, {.games = 10, .seed = 1, .max_steps = 20});
  CHECK(r.timeouts == 10);
  CHECK(r.avg_length() == 20);
}

// lost-cities.md §5: the reference's 1000-game match table. Win rates within ±0.02, average score
// differences within 5% (or three standard errors where the reference value is near zero) and
// average lengths within 5%.
TEST_CASE("the reference's 1000-game match table is reproduced") {
  struct Row {
    const char* bot0;
    double win_rate, diff, length;
  };
  const Row rows[] = {{"random", 0.509, -0.17, 287},
                      {"heuristic_balanced", 1.000, 105.1, 166},
                      {"heuristic_cautious", 1.000, 91.3, 187},
                      {"heuristic_aggressive", 1.000, 108.6, 155},
                      {"heuristic_noisy", 0.996, 93.7, 167},
                      {"discard_only", 0.998, 57.1, 142}};
  for (const Row& row : rows) {
    auto b0 = make_bot(row.bot0, Rules{});
    auto b1 = make_bot("random", Rules{});
    const auto r = run_match(*b0, *b1, {.games = 1000, .seed = 0, .duplicate = false});  // the reference's protocol
    INFO(format_report(r));
    CHECK(std::abs(r.win_rate() - row.win_rate) <= 0.02);
    const double diff_tol = std::max(0.05 * std::abs(row.diff), 3.0 * r.sd_diff() / std::sqrt(1000.0));
    CHECK(std::abs(r.avg_diff() - row.diff) <= diff_tol);
    CHECK(std::abs(r.avg_length() - row.length) <= 0.05 * row.length);
    CHECK(r.timeouts == 0);
  }
}

namespace {
// A deterministic bot seen as a BatchBot: decides each pending game in turn, recording batch sizes.
class Batched final : public cfr::lc::BatchBot {
 public:
  explicit Batched(cfr::lc::Bot& bot) : bot_(bot) {}
  std::string_view name() const noexcept override { return bot_.name(); }
  void choose_actions(std::span<const cfr::lc::State* const> states, std::span<cfr::Rng* const>, std::span<const int>,
                      std::span<int> actions) override {
    cfr::Rng unused(0);
    for (std::size_t i = 0; i < states.size(); ++i) actions[i] = bot_.choose_action(*states[i], unused);
    largest = std::max(largest, states.size());
    ++calls;
  }
  std::size_t largest = 0, calls = 0;

 private:
  cfr::lc::Bot& bot_;
};
}  // namespace

TEST_CASE("a batched match plays the same games as run_match, many decisions per call") {
  using namespace cfr::lc;
  const Rules rules{};
  for (const char* opponent : {"random", "heuristic_cautious"}) {
    CAPTURE(opponent);
    auto me = make_bot("heuristic_balanced", rules);
    auto other = make_bot(opponent, rules);
    const MatchOptions opts{.games = 40, .seed = 11, .max_steps = 10000, .rules = rules};
    const MatchReport plain = run_match(*me, *other, opts);
    Batched batched(*me);
    const MatchReport b = run_match_batched(batched, *other, opts, 16);
    CHECK(b.games == plain.games);
    CHECK(b.wins == plain.wins);
    CHECK(b.losses == plain.losses);
    CHECK(b.score0_sum == plain.score0_sum);
    CHECK(b.score1_sum == plain.score1_sum);
    CHECK(b.length_sum == plain.length_sum);
    CHECK(b.diff_sq_sum == plain.diff_sq_sum);
    CHECK(batched.largest == 16);
    CHECK(batched.calls < plain.length_sum / 2 / 8);  // ≥ 8 decisions per call on average
  }
  // A step cap stops games the same way.
  auto me = make_bot("heuristic_balanced", rules);
  auto other = make_bot("random", rules);
  const MatchOptions capped{.games = 6, .seed = 3, .max_steps = 25, .rules = rules};
  Batched batched(*me);
  const MatchReport a = run_match(*me, *other, capped), b = run_match_batched(batched, *other, capped, 4);
  CHECK(a.timeouts == 6);
  CHECK(b.timeouts == a.timeouts);
  CHECK(b.score0_sum == a.score0_sum);
}

// --- heuristic_expert (engine/games/expert_bot.h) ----------------------------------------------

namespace {

// A state built from a deck (public ids, top last) with the default rules, then the given moves.
State expert_position(const std::vector<int>& top_cards, const std::vector<int>& moves) {
  const Rules r;
  // Every card id once (wagers n_handshakes times), the named cards moved to the top in order.
  std::vector<int> deck;
  for (int c = 0; c < r.n_colors; ++c)
    for (int k = 0; k <= r.n_ranks; ++k)
      for (int n = 0; n < (k == 0 ? r.n_handshakes : 1); ++n) deck.push_back(c * (r.n_ranks + 1) + k);
  for (const int id : top_cards) {
    const auto it = std::find(deck.begin(), deck.end(), id);
    REQUIRE(it != deck.end());
    deck.erase(it);
    deck.push_back(id);
  }
  State s = State::from_deck(r, deck);
  for (const int a : moves) s.apply_action(a);
  return s;
}

// The top cards dealt as hands: hand0[i], hand1[i] alternate from the top of the deck.
std::vector<int> deal_order(const std::vector<int>& hand0, const std::vector<int>& hand1, const std::vector<int>& then = {}) {
  std::vector<int> top;  // listed bottom-most first; the last element is dealt first
  for (auto it = then.rbegin(); it != then.rend(); ++it) top.push_back(*it);
  for (int i = static_cast<int>(hand0.size()) - 1; i >= 0; --i) {
    top.push_back(hand1[static_cast<std::size_t>(i)]);
    top.push_back(hand0[static_cast<std::size_t>(i)]);
  }
  return top;
}

int id(int color, int face) { return color * 10 + (face == 0 ? 0 : face - 1); }  // default rules

}  // namespace

TEST_CASE("heuristic_expert does not discard a card the opponent can play on an open expedition") {
  // Seat 1 opens color 0 with a 2; seat 0 then holds the 10 of color 0 among cards dead for
  // nobody's purposes and must discard one of them: never the 10 of color 0.
  const std::vector<int> h0 = {id(0, 10), id(1, 3), id(1, 4), id(2, 2), id(3, 5), id(4, 3), id(4, 4), id(2, 3)};
  const std::vector<int> h1 = {id(0, 2), id(0, 3), id(1, 9), id(2, 9), id(3, 9), id(4, 9), id(1, 10), id(2, 10)};
  const Rules r;
  // Seat 0 discards slot 5 (c4:3), draws; seat 1 plays c0:2 (slot 0), draws.
  State s = expert_position(deal_order(h0, h1), {11, r.draw_deck_action(), 0, r.draw_deck_action()});
  REQUIRE(s.current_player() == 0);
  REQUIRE(s.expedition(1, 0).last_rank == 1);
  REQUIRE(s.playable(1, Card::make(0, 9)));
  auto bot = make_bot("heuristic_expert", r);
  Rng rng(0);
  const int a = bot->choose_action(s, rng);
  const int slot = a / 2;
  CHECK_FALSE((a % 2 == 1 && s.hand_card(0, slot) == Card::make(0, 9)));
}

TEST_CASE("heuristic_expert does not open a new expedition late in the game without support") {
  // Late game (6 cards left, both sides have only discarded): where no color's numerics in hand
  // add up to 14, nothing can reach the 20 an expedition costs in the three turns left, so the
  // expert discards.
  const Rules r;
  State s = State::deal(r, 0);
  auto discard_only = make_bot("discard_only", r);
  Rng rng(0);
  int checked = 0;
  for (std::uint64_t seed = 0; seed < 200; ++seed) {
    s = State::deal(r, seed);
    while (!s.is_terminal() && s.deck_size() > 6) s.apply_action(discard_only->choose_action(s, rng));
    if (s.is_terminal() || s.phase() != Phase::kCard) continue;
    const int p = s.current_player();
    int per_color[kMaxColors] = {};
    for (int i = 0; i < s.hand_size(p); ++i) per_color[s.hand_card(p, i).color()] += r.face(s.hand_card(p, i).rank());
    if (*std::max_element(per_color, per_color + r.n_colors) >= 14) continue;
    auto bot = make_bot("heuristic_expert", r);
    const int a = bot->choose_action(s, rng);
    INFO("seed ", seed, " action ", a, "\n", s.to_string());
    CHECK(a % 2 == 1);  // a discard: nothing is open, so any play would open an expedition
    ++checked;
  }
  CHECK(checked >= 3);
}

TEST_CASE("heuristic_expert draws a discard that extends its own expedition") {
  // Seat 0 opens color 0 with its 2 and 3 and holds more of it; seat 1 discards the 4 of color 0.
  // Seat 0 then plays and must take the 4 back from pile 0 rather than draw from the deck.
  const std::vector<int> h0 = {id(0, 2), id(0, 3), id(0, 6), id(0, 8), id(1, 9), id(2, 9), id(3, 9), id(4, 9)};
  const std::vector<int> h1 = {id(0, 4), id(1, 2), id(2, 2), id(3, 2), id(4, 2), id(1, 3), id(2, 3), id(3, 3)};
  const Rules r;
  State s = expert_position(deal_order(h0, h1), {0, r.draw_deck_action(), 1, r.draw_deck_action()});
  REQUIRE(s.current_player() == 0);
  REQUIRE(s.pile_size(0) == 1);
  REQUIRE(s.pile_top(0) == Card::make(0, 3));
  auto bot = make_bot("heuristic_expert", r);
  Rng rng(0);
  const int card = bot->choose_action(s, rng);
  s.apply_action(card);
  REQUIRE(s.phase() == Phase::kDraw);
  if (s.pending_color() != 0) CHECK(bot->choose_action(s, rng) == r.pile_action(0));
}

TEST_CASE("heuristic_expert is deterministic and every move is legal, on every rule set tried") {
  for (const Rules& r : {Rules{}, Rules{.n_colors = 3, .n_ranks = 6, .n_handshakes = 2, .hand_size = 5},
                         Rules{.n_colors = 2, .n_ranks = 4, .n_handshakes = 0, .hand_size = 2},
                         Rules{.n_colors = 8, .n_ranks = 12, .n_handshakes = 4, .hand_size = 12, .bonus_threshold = 3}}) {
    for (const char* opp : {"heuristic_expert", "random", "heuristic_balanced"}) {
      std::vector<int> first_run;
      for (int run = 0; run < 2; ++run) {
        auto e = make_bot("heuristic_expert", r);
        auto o = make_bot(opp, r);
        std::vector<int> actions;
        for (int g = 0; g < 30; ++g) {
          State s = State::deal(r, static_cast<std::uint64_t>(g));
          Rng r0(static_cast<std::uint64_t>(run + 1)), r1(7);
          int step = 0;
          for (; step < 20000 && !s.is_terminal(); ++step) {
            const bool mine = s.current_player() == g % 2;
            const int a = mine ? e->choose_action(s, r0) : o->choose_action(s, r1);
            INFO(opp, " game ", g, " step ", step);
            REQUIRE(cfr::mask_has(s.legal_mask(), a));
            if (mine) actions.push_back(a);
            s.apply_action(a);
          }
          CHECK(s.is_terminal());  // the expert stops prolonging after 3·deck_size draws
        }
        if (run == 0)
          first_run = actions;
        else
          CHECK(actions == first_run);  // same states, other RNG seeds: the same moves
      }
    }
  }
}

TEST_CASE("a heuristic_expert variant takes its weights from its spec and is named by it") {
  const Rules r;
  const std::string tight = "heuristic_expert?open_margin=8&open_extra=8&free_opens=1";
  REQUIRE(names_bot(tight));
  REQUIRE(names_bot("heuristic_expert"));
  CHECK_FALSE(names_bot("heuristic_expertise"));
  const ExpertParams p = parse_expert_params("open_margin=8&open_extra=8&free_opens=1");
  CHECK(p.open_margin == 8.0);
  CHECK(p.open_extra == 8.0);
  CHECK(p.free_opens == 1);
  CHECK(p.deny == ExpertParams{}.deny);  // the rest at the defaults
  auto variant = make_bot(tight, r);
  CHECK(variant->name() == tight);
  CHECK(variant->deterministic());
  // A variant that never opens past its margin opens fewer expeditions than the expert, on the
  // same deals against the same opponent: the weights reach the decisions.
  auto expert = make_bot("heuristic_expert", r);
  auto opponent = make_bot("heuristic_balanced", r);
  const auto opened = [&](Bot& b) {
    int n = 0;
    for (std::uint64_t g = 0; g < 40; ++g) {
      State s = State::deal(r, g);
      Rng r0(1), r1(2);
      for (int step = 0; step < 20000 && !s.is_terminal(); ++step) {
        const int a = s.current_player() == 0 ? b.choose_action(s, r0) : opponent->choose_action(s, r1);
        REQUIRE(cfr::mask_has(s.legal_mask(), a));
        s.apply_action(a);
      }
      for (int c = 0; c < r.n_colors; ++c) n += s.expedition(0, c).len > 0;
    }
    return n;
  };
  const int n_expert = opened(*expert), n_tight = opened(*variant);
  INFO("expeditions opened in 40 games: expert ", n_expert, ", tight variant ", n_tight);
  CHECK(n_tight < n_expert - 20);
  // The same spec twice plays the same moves (the default spec would be the expert itself).
  auto same = make_bot("heuristic_expert?deny=0.5", r);  // deny's default: the expert's moves
  CHECK(opened(*same) == n_expert);
}

TEST_CASE("a heuristic_expert variant's spec is refused with the key and the range") {
  const Rules r;
  CHECK_THROWS_WITH_AS(make_bot("heuristic_expert?bogus=1", r), doctest::Contains("unknown key 'bogus' (keys: future_factor"),
                       cfr::InputError);
  CHECK_THROWS_WITH_AS(make_bot("heuristic_expert?free_opens=2.5", r),
                       doctest::Contains("free_opens=2.5: must be an integer in [0, 5]"), cfr::InputError);
  CHECK_THROWS_WITH_AS(make_bot("heuristic_expert?late_ratio=2", r),
                       doctest::Contains("late_ratio=2: must be a number in [0, 1]"), cfr::InputError);
  CHECK_THROWS_WITH_AS(make_bot("heuristic_expert?deny=nan", r), doctest::Contains("deny=nan: must be a number"),
                       cfr::InputError);
  CHECK_THROWS_WITH_AS(make_bot("heuristic_expert?deny=1&deny=2", r), doctest::Contains("key 'deny' given twice"),
                       cfr::InputError);
  CHECK_THROWS_WITH_AS(make_bot("heuristic_expert?deny", r), doctest::Contains("'deny': want key=value"), cfr::InputError);
  CHECK_THROWS_WITH_AS(make_bot("heuristic_expert?", r), doctest::Contains("no key=value after the '?'"), cfr::InputError);
  CHECK_THROWS_WITH_AS(make_bot("heuristic_expert?deny=1e400", r), doctest::Contains("deny=1e400: must be a number"),
                       cfr::InputError);
}
