// ExactDivider (tracer/src/exact_divider.hpp) against the div instruction:
// the writer codes every event time with it, so one wrong quotient would
// shift a time in the trace.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "exact_divider.hpp"

namespace {

using memtrail::format::ExactDivider;

std::uint64_t splitmix(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

TEST(ExactDivider, MatchesDivisionAtEdgesAndAtRandom) {
  const std::vector<std::uint64_t> divisors = {1,
                                               2,
                                               3,
                                               7,
                                               10,
                                               999,
                                               1000,
                                               1024,
                                               1'000'000,
                                               999'999'937,
                                               1'000'000'000,
                                               (1ull << 32) + 1,
                                               (1ull << 63) - 1,
                                               1ull << 63,
                                               ~0ull};
  std::uint64_t state = 42;
  for (std::uint64_t d : divisors) {
    ExactDivider div(d);
    std::vector<std::uint64_t> values = {0, 1, d - 1, d, d + 1, ~0ull, ~0ull - 1, ~0ull - d};
    // Around multiples of d, where an estimate one too low shows.
    for (std::uint64_t k : {2ull, 3ull, 1000ull, ~0ull / d})
      if (k <= ~0ull / d) {
        values.push_back(k * d);
        values.push_back(k * d - 1);
      }
    for (int i = 0; i < 20000; ++i) {
      std::uint64_t r = splitmix(state);
      values.push_back(r);
      values.push_back(r >> (r & 63));  // small values too
    }
    for (std::uint64_t n : values) ASSERT_EQ(div.divide(n), n / d) << n << " / " << d;
  }
}

}  // namespace
