#pragma once
// The project's own random number generator, so that every deal, every playout and every
// traversal is reproducible bit for bit on any platform and standard library.
//
// Generator: xoshiro256** 1.0 (Blackman & Vigna, "Scrambled linear pseudorandom number
// generators", 2018), 256-bit state, period 2^256 - 1. Seeding: the four state words are the
// first four outputs of SplitMix64 started at the seed, as the authors recommend.
// Bounded integers: Lemire's multiply-shift with rejection ("Fast random integer generation in
// an interval", 2019): exactly uniform, no modulo bias. Doubles: the top 53 bits / 2^53.
//
// Streams: derive_seed(seed, a, b, c) mixes a base seed with up to three stream coordinates
// (e.g. iteration, player, traversal index) through SplitMix64's finaliser, so that each
// traversal owns an independent stream whatever the order in which traversals run.
//
// Thread-safety: an Rng is a plain value; one Rng per thread or per traversal.
#include <cstdint>

namespace cfr {

/// SplitMix64 finaliser (Steele, Lea & Flood 2014): a bijective 64-bit mixer.
constexpr std::uint64_t mix64(std::uint64_t z) noexcept {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/// A seed for the stream with coordinates (a, b, c) under `seed`. Distinct coordinates give
/// unrelated streams; the same coordinates always give the same seed.
constexpr std::uint64_t derive_seed(std::uint64_t seed, std::uint64_t a, std::uint64_t b = 0, std::uint64_t c = 0) noexcept {
  std::uint64_t h = mix64(seed + 0x9e3779b97f4a7c15ULL);
  h = mix64(h ^ (a + 0x632be59bd9b4e019ULL));
  h = mix64(h ^ (b + 0x85157af5a4a7c3e1ULL));
  h = mix64(h ^ (c + 0x2545f4914f6cdd1dULL));
  return h;
}

class Rng {
 public:
  using result_type = std::uint64_t;

  constexpr explicit Rng(std::uint64_t seed = 0) noexcept { reseed(seed); }

  constexpr void reseed(std::uint64_t seed) noexcept {
    std::uint64_t x = seed;
    for (auto& w : s_) {
      x += 0x9e3779b97f4a7c15ULL;
      w = mix64(x);
    }
  }

  static constexpr result_type min() noexcept { return 0; }
  static constexpr result_type max() noexcept { return ~result_type{0}; }

  /// Next 64 random bits.
  constexpr std::uint64_t operator()() noexcept {
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  /// Uniform integer in [0, n). Precondition: n > 0.
  constexpr std::uint32_t below(std::uint32_t n) noexcept {
    std::uint64_t m = (operator()() >> 32) * n;
    auto low = static_cast<std::uint32_t>(m);
    if (low < n) {
      const std::uint32_t threshold = static_cast<std::uint32_t>(-n) % n;
      while (low < threshold) {
        m = (operator()() >> 32) * n;
        low = static_cast<std::uint32_t>(m);
      }
    }
    return static_cast<std::uint32_t>(m >> 32);
  }

  /// Uniform integer in [0, n) for 64-bit n (Lemire's method with a 128-bit product).
  /// Precondition: n > 0.
  std::uint64_t below64(std::uint64_t n) noexcept {
    __uint128_t m = static_cast<__uint128_t>(operator()()) * n;
    auto low = static_cast<std::uint64_t>(m);
    if (low < n) {
      const std::uint64_t threshold = (0 - n) % n;
      while (low < threshold) {
        m = static_cast<__uint128_t>(operator()()) * n;
        low = static_cast<std::uint64_t>(m);
      }
    }
    return static_cast<std::uint64_t>(m >> 64);
  }

  /// Uniform double in [0, 1).
  constexpr double uniform() noexcept { return static_cast<double>(operator()() >> 11) * 0x1.0p-53; }

  /// The full generator state, for checkpoints.
  struct StateWords {
    std::uint64_t w[4];
  };
  constexpr StateWords state() const noexcept { return {{s_[0], s_[1], s_[2], s_[3]}}; }
  constexpr void set_state(const StateWords& st) noexcept {
    for (int i = 0; i < 4; ++i) s_[i] = st.w[i];
  }

 private:
  static constexpr std::uint64_t rotl(std::uint64_t x, int k) noexcept { return (x << k) | (x >> (64 - k)); }
  std::uint64_t s_[4]{};
};

}  // namespace cfr
