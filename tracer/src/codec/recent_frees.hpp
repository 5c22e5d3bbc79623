// RecentFrees, the model's list of a thread's recently freed blocks
// (docs/trace-format.md 3.2): the live entries among the last kRecentFrees
// addresses the thread freed, newest first. Rank r is the r-th newest free
// whose block has not been allocated again. Allocators hand recently freed
// blocks out again, so an alloc's address is often one of these.
//
// A ring with a live bitmap, plus an exact windowed index address -> newest
// push: an entry leaving the window leaves the index, so the index stays at
// 2048 slots (24 KiB) and in cache. Kept apart from AddressTable
// (memtrail/detail/address_table.hpp), with its deletion rule (probe_gap.hpp)
// shared: the window bounds it to 1024 members, so it lives inline in every
// per-thread state, which the decoder resets and reuses each chunk; an
// AddressTable is two mappings of its own per state and reads an entry
// besides its index slot on every hit (bench_address_table: Find at 10^4
// keys, dense vs inline). Keys and sequence numbers lie in two arrays, so a
// probe reads 8-byte keys only.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>

#include "../assert_levels.hpp"
#include "../format_layout.hpp"
#include "memtrail/detail/probe_gap.hpp"

namespace memtrail::format::codec {

// Population count without relying on the popcnt instruction (the build
// targets baseline x86-64, where std::popcount becomes a libgcc call).
inline int popcount64(std::uint64_t x) {
  x = x - ((x >> 1) & 0x5555555555555555ull);
  x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
  x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
  return static_cast<int>((x * 0x0101010101010101ull) >> 56);
}

struct RecentFrees {
  static_assert((kRecentFrees & (kRecentFrees - 1)) == 0, "ring size is a power of two");
  static constexpr unsigned kIndexSlots = 2 * kRecentFrees;  // power of two
  std::array<std::uint64_t, kRecentFrees> ring{};
  std::array<std::uint64_t, kRecentFrees / 64> live{};
  std::uint64_t pushed = 0;  // frees pushed in this chunk
  // address -> newest push of it within the window; key 0 = empty (a freed
  // address of 0 is never pushed).
  std::array<std::uint64_t, kIndexSlots> index_key{};
  std::array<std::uint32_t, kIndexSlots> index_seq{};

  static unsigned slot(std::uint64_t seq) {
    return static_cast<unsigned>(seq & (kRecentFrees - 1));
  }
  static unsigned home(std::uint64_t a) {
    return static_cast<unsigned>((a * 0x9e3779b97f4a7c15ull) >> 53);  // 11 bits
  }
  static_assert(kIndexSlots == 2048, "home yields 11 bits");

  bool is_live(std::uint64_t seq) const {
    unsigned i = slot(seq);
    return (live[i >> 6] >> (i & 63)) & 1;
  }
  std::uint64_t address_of(std::uint64_t seq) const { return ring[slot(seq)]; }

  // A new chunk: nothing pushed. Ring entries are read only where live.
  void reset() {
    live.fill(0);
    pushed = 0;
    index_key.fill(0);
  }

  // Sequence numbers fit 32 bits: a chunk holds far fewer than 2^32 events.
  // The entry leaving the window leaves the index too when it is its
  // address's newest push.
  void push(std::uint64_t a) {
    MEMTRAIL_ASSERT_INTERNAL(a != 0);
    if (pushed >= kRecentFrees) {
      std::uint64_t old = pushed - kRecentFrees;
      int i = index_find(address_of(old));
      if (i >= 0 && index_seq[i] == static_cast<std::uint32_t>(old))
        index_erase(static_cast<unsigned>(i));
    }
    unsigned s = slot(pushed);
    ring[s] = a;
    live[s >> 6] |= std::uint64_t{1} << (s & 63);
    unsigned i = home(a);
    while (index_key[i] != 0 && index_key[i] != a) i = (i + 1) & (kIndexSlots - 1);
    index_key[i] = a;
    index_seq[i] = static_cast<std::uint32_t>(pushed);
    ++pushed;
    MEMTRAIL_ASSERT_EXPENSIVE(pushed % 128 != 0 || index_matches_window());  // sampled: O(window)
  }

  // The newest push of `a` in the window, when it is still live.
  bool find(std::uint64_t a, std::uint64_t& seq) const {
    int i = index_find(a);
    if (i < 0 || !is_live(index_seq[i])) return false;
    seq = index_seq[i];
    return true;
  }
  void take(std::uint64_t seq) {  // the block is live again
    MEMTRAIL_ASSERT_INTERNAL(seq < pushed && pushed - seq <= kRecentFrees);
    unsigned i = slot(seq);
    live[i >> 6] &= ~(std::uint64_t{1} << (i & 63));
  }
  // find + take: the newest push of `a` in the window, if live, is live no more.
  void take_address(std::uint64_t a) {
    int i = index_find(a);
    if (i >= 0) take(index_seq[i]);
  }

  // Rank of live entry `seq`: the live entries pushed after it.
  int rank_of(std::uint64_t seq) const {
    MEMTRAIL_ASSERT_INTERNAL(seq < pushed && is_live(seq));
    int n = 0;
    for (std::uint64_t s = seq + 1; s < pushed;) {
      unsigned i = slot(s), bit = i & 63;
      std::uint64_t span = std::min<std::uint64_t>(64 - bit, pushed - s);
      std::uint64_t w = live[i >> 6] >> bit;
      if (span < 64) w &= (std::uint64_t{1} << span) - 1;
      n += popcount64(w);
      s += span;
    }
    return n;
  }

  // The live entry of rank `rank`, newest first; false when there are not
  // that many. Walks the live bitmap a word at a time.
  [[gnu::noinline]] bool seq_at(std::uint64_t rank, std::uint64_t& seq) const {
    std::uint64_t oldest = pushed > kRecentFrees ? pushed - kRecentFrees : 0;
    for (std::uint64_t s = pushed; s > oldest;) {  // entries [s - span, s) share a word
      unsigned top = slot(s - 1);
      std::uint64_t span = std::min<std::uint64_t>((top & 63) + 1, s - oldest);
      std::uint64_t w = live[top >> 6] >> ((top & 63) + 1 - span);
      if (span < 64) w &= (std::uint64_t{1} << span) - 1;
      std::uint64_t c = static_cast<std::uint64_t>(popcount64(w));
      if (rank < c) {
        seq = s - span + static_cast<std::uint64_t>(highest_set_bit(w, c, rank));
        MEMTRAIL_ASSERT_INTERNAL(is_live(seq));
        return true;
      }
      rank -= c;
      s -= span;
    }
    return false;
  }

 private:
  // Position of the rank-th highest of the c set bits of w, cleared towards
  // from the nearer end.
  static int highest_set_bit(std::uint64_t w, std::uint64_t c, std::uint64_t rank) {
    if (2 * rank < c) {
      for (; rank > 0; --rank) w &= ~(std::uint64_t{1} << (63 - std::countl_zero(w)));
      return 63 - std::countl_zero(w);
    }
    for (std::uint64_t low = c - 1 - rank; low > 0; --low) w &= w - 1;
    return std::countr_zero(w);
  }

  int index_find(std::uint64_t a) const {
    for (unsigned i = home(a);; i = (i + 1) & (kIndexSlots - 1)) {
      if (index_key[i] == a) return static_cast<int>(i);
      if (index_key[i] == 0) return -1;
    }
  }
  void index_erase(unsigned hole) {
    std::size_t last = close_probe_gap(
        hole, kIndexSlots - 1, [&](std::size_t j) { return index_key[j] == 0; },
        [&](std::size_t j) { return std::size_t{home(index_key[j])}; },
        [&](std::size_t from, std::size_t to) {
          index_key[to] = index_key[from];
          index_seq[to] = index_seq[from];
        });
    index_key[last] = 0;
  }

  // MEMTRAIL_ASSERT_EXPENSIVE: the index holds only pushes of the window,
  // and for every address pushed in the window a push no older than any
  // other of it: its newest.
  bool index_matches_window() const {
    std::uint64_t oldest = pushed > kRecentFrees ? pushed - kRecentFrees : 0;
    for (unsigned i = 0; i < kIndexSlots; ++i) {
      std::uint64_t s = index_seq[i];
      if (index_key[i] != 0 && (s < oldest || s >= pushed || address_of(s) != index_key[i]))
        return false;
    }
    for (std::uint64_t s = oldest; s < pushed; ++s) {
      int i = index_find(address_of(s));
      if (i < 0 || index_seq[i] < s) return false;
    }
    return true;
  }
};

}  // namespace memtrail::format::codec
