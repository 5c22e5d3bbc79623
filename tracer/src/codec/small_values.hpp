// The model's small caches (the size slots and the fresh-end ring), over a
// lookup policy. The decoder reads them by position only (ReadByPosition);
// the encoder asks "which position holds this value" on every event
// (FindByValue), so it also keeps the low 32 bits of every value in an
// aligned array and compares them all at once (SSE2), then checks the full
// value of the candidates.
#pragma once

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <array>
#include <bit>
#include <cstdint>

#include "../assert_levels.hpp"

namespace memtrail::format::codec {

struct ReadByPosition {  // the decoder's policy
  static constexpr bool kFindsValues = false;
};
struct FindByValue {  // the encoder's policy
  static constexpr bool kFindsValues = true;
};

// Bit i set when low[i] equals the low 32 bits of `v`; n is a multiple of 4,
// at most 64, and `low` 16-byte aligned.
inline std::uint64_t match_low32(const std::uint32_t* low, int n, std::uint64_t v) {
  std::uint64_t bits = 0;
#if defined(__SSE2__)
  __m128i key = _mm_set1_epi32(static_cast<int>(static_cast<std::uint32_t>(v)));
  for (int i = 0; i < n; i += 4) {
    __m128i eq = _mm_cmpeq_epi32(_mm_load_si128(reinterpret_cast<const __m128i*>(low + i)), key);
    bits |= static_cast<std::uint64_t>(_mm_movemask_ps(_mm_castsi128_ps(eq))) << i;
  }
#else
  for (int i = 0; i < n; ++i)
    bits |= static_cast<std::uint64_t>(low[i] == static_cast<std::uint32_t>(v)) << i;
#endif
  return bits;
}

// N values read by position; under FindByValue also found by value.
template <int N, class Lookup>
struct SmallValues {
  static_assert(N % 4 == 0 && N <= 64, "match_low32 compares groups of 4, at most 64");
  std::array<std::uint64_t, N> value{};
  alignas(16) std::array<std::uint32_t, Lookup::kFindsValues ? N : 0> low{};

  std::uint64_t operator[](int i) const { return value[i]; }
  void set(int i, std::uint64_t v) {
    MEMTRAIL_ASSERT_INTERNAL(i >= 0 && i < N);
    value[i] = v;
    if constexpr (Lookup::kFindsValues) low[i] = static_cast<std::uint32_t>(v);
  }
  void clear() {
    value.fill(0);
    low.fill(0);
  }
  // Bit i set when value[i] == v.
  std::uint64_t positions_of(std::uint64_t v) const requires Lookup::kFindsValues {
    std::uint64_t bits = 0;
    for (std::uint64_t c = match_low32(low.data(), N, v); c; c &= c - 1)
      if (value[std::countr_zero(c)] == v) bits |= c & -c;
    return bits;
  }
};

}  // namespace memtrail::format::codec
