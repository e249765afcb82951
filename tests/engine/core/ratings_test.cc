// Bradley–Terry ratings (engine/core/ratings.h) against hand-computed values.
#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>

#include "engine/core/ratings.h"

using namespace cfr;

TEST_CASE("two players: the rating gap is 400·log10 of the score ratio, prior included") {
  // a scores 75 of 100 against b; with one virtual drawn game: 75.5 vs 25.5 of 101.
  const auto r = bradley_terry({"a", "b"}, {{.a = 0, .b = 1, .games = 100, .a_score = 75}}, /*anchor=*/1);
  const double gap = 400 * std::log10(75.5 / 25.5);
  CHECK(r[1].elo == 0.0);
  CHECK(r[0].elo == doctest::Approx(gap).epsilon(1e-9));
  // 95% interval: ±1.96·(400/ln 10)/sqrt(n·π(1−π)) with π = 75.5/101.
  const double pi = 75.5 / 101, half = 1.959963984540054 * 400 / std::log(10.0) / std::sqrt(101 * pi * (1 - pi));
  CHECK(r[0].lo == doctest::Approx(gap - half).epsilon(1e-9));
  CHECK(r[0].hi == doctest::Approx(gap + half).epsilon(1e-9));
  CHECK(r[0].score == 75);
  CHECK(r[0].games == 100);
  CHECK(r[1].lo == 0.0);
  CHECK(r[1].hi == 0.0);
}

TEST_CASE("three players in a consistent order are rated in that order and a sweep stays finite") {
  const auto r = bradley_terry({"strong", "middle", "weak"}, {{.a = 0, .b = 1, .games = 100, .a_score = 70},
                                                              {.a = 1, .b = 2, .games = 100, .a_score = 70},
                                                              {.a = 0, .b = 2, .games = 100, .a_score = 100}});
  CHECK(r[0].elo == 0.0);
  CHECK(r[1].elo < 0.0);
  CHECK(r[2].elo < r[1].elo);
  CHECK(std::isfinite(r[2].elo));
  CHECK(r[2].lo < r[2].elo);
  CHECK(r[2].hi > r[2].elo);
  // Equal records give equal ratings.
  const auto eq = bradley_terry({"x", "y", "z"}, {{.a = 0, .b = 1, .games = 10, .a_score = 5},
                                                  {.a = 1, .b = 2, .games = 10, .a_score = 5},
                                                  {.a = 0, .b = 2, .games = 10, .a_score = 5}});
  CHECK(eq[1].elo == doctest::Approx(0.0).epsilon(1e-9));
  CHECK(eq[2].elo == doctest::Approx(0.0).epsilon(1e-9));
}

TEST_CASE("bad pairs are refused") {
  CHECK_THROWS_AS(bradley_terry({"a", "b"}, {{.a = 0, .b = 0, .games = 1, .a_score = 1}}), std::invalid_argument);
  CHECK_THROWS_AS(bradley_terry({"a", "b"}, {{.a = 0, .b = 2, .games = 1, .a_score = 1}}), std::invalid_argument);
  CHECK_THROWS_AS(bradley_terry({"a", "b"}, {}, 5), std::invalid_argument);
}
