// RecentFrees, the model's list of a thread's recently freed blocks
// (docs/trace-format.md 3.2): the live entries among the last kRecentFrees
// addresses the thread freed, newest first. Rank r is the r-th newest free
// whose block has not been allocated again. Allocators hand recently freed
// blocks out again, so an alloc's address is often one of these.
//
// A ring with a live bitmap, plus an exact windowed index address -> newest
// push: an entry leaving the window leaves the index, so the index stays at
// 2048 slots and in cache. A slot holds the push's ring position (2 bytes),
// not its address and sequence number (12): the address is the ring's entry
// there, and the window names the push. One thread's state is then ~4 KiB
// of index, not 24, and the writer holds one per thread of a chunk (64
// threads: 1.3 MiB less). Kept apart from AddressTable
// (memtrail/detail/address_table.hpp), with its deletion rule (probe_gap.hpp)
// shared: the window bounds it to 1024 members, so it lives inline in every
// per-thread state, which the decoder resets and reuses each chunk; an
// AddressTable is two mappings of its own per state and reads an entry
// besides its index slot on every hit (bench_address_table: Find at 10^4
// keys, dense vs inline).
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
  static constexpr std::uint16_t kNoEntry = 0xffff;          // not a ring position
  static_assert(kRecentFrees <= kNoEntry, "ring positions fit 16 bits");
  std::array<std::uint64_t, kRecentFrees> ring{};
  std::array<std::uint64_t, kRecentFrees / 64> live{};
  std::uint64_t pushed = 0;  // frees pushed in this chunk
  // address -> ring position of its newest push within the window (the
  // address is ring[position]); kNoEntry = empty.
  std::array<std::uint16_t, kIndexSlots> index_slot = empty_index();

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
  // The push in the window whose ring position is `position`.
  std::uint64_t seq_at_slot(unsigned position) const {
    MEMTRAIL_ASSERT_INTERNAL(pushed > 0);
    return pushed - 1 - ((pushed - 1 - position) & (kRecentFrees - 1));
  }

  // A new chunk: nothing pushed. Ring entries are read only where live.
  void reset() {
    live.fill(0);
    pushed = 0;
    index_slot.fill(kNoEntry);
  }

  // Sequence numbers fit 32 bits: a chunk holds far fewer than 2^32 events.
  // The entry leaving the window leaves the index too when it is its
  // address's newest push.
  void push(std::uint64_t a) {
    MEMTRAIL_ASSERT_INTERNAL(a != 0);
    unsigned s = slot(pushed);
    if (pushed >= kRecentFrees) {  // the push at s leaves the window
      int i = index_find(ring[s]);
      if (i >= 0 && index_slot[i] == s) index_erase(static_cast<unsigned>(i));
    }
    ring[s] = a;
    live[s >> 6] |= std::uint64_t{1} << (s & 63);
    unsigned i = home(a);
    while (index_slot[i] != kNoEntry && ring[index_slot[i]] != a) i = (i + 1) & (kIndexSlots - 1);
    index_slot[i] = static_cast<std::uint16_t>(s);
    ++pushed;
    MEMTRAIL_ASSERT_EXPENSIVE(pushed % 128 != 0 || index_matches_window());  // sampled: O(window)
  }

  // The newest push of `a` in the window, when it is still live.
  bool find(std::uint64_t a, std::uint64_t& seq) const {
    int i = index_find(a);
    if (i < 0 || !is_live(index_slot[i])) return false;  // is_live reads the position only
    seq = seq_at_slot(index_slot[i]);
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
    if (i >= 0) take(seq_at_slot(index_slot[i]));
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

  static std::array<std::uint16_t, kIndexSlots> empty_index() {
    std::array<std::uint16_t, kIndexSlots> index;
    index.fill(kNoEntry);
    return index;
  }
  int index_find(std::uint64_t a) const {
    for (unsigned i = home(a);; i = (i + 1) & (kIndexSlots - 1)) {
      if (index_slot[i] == kNoEntry) return -1;
      if (ring[index_slot[i]] == a) return static_cast<int>(i);
    }
  }
  void index_erase(unsigned hole) {
    std::size_t last = close_probe_gap(
        hole, kIndexSlots - 1, [&](std::size_t j) { return index_slot[j] == kNoEntry; },
        [&](std::size_t j) { return std::size_t{home(ring[index_slot[j]])}; },
        [&](std::size_t from, std::size_t to) { index_slot[to] = index_slot[from]; });
    index_slot[last] = kNoEntry;
  }

  // MEMTRAIL_ASSERT_EXPENSIVE: the index holds only pushes of the window,
  // and for every address pushed in the window a push no older than any
  // other of it: its newest.
  bool index_matches_window() const {
    std::uint64_t oldest = pushed > kRecentFrees ? pushed - kRecentFrees : 0;
    for (unsigned i = 0; i < kIndexSlots; ++i)  // a position of the window, once
      if (index_slot[i] != kNoEntry &&
          (index_slot[i] >= kRecentFrees || pushed == 0 || seq_at_slot(index_slot[i]) < oldest))
        return false;
    for (std::uint64_t s = oldest; s < pushed; ++s) {
      int i = index_find(address_of(s));
      if (i < 0 || seq_at_slot(index_slot[i]) < s) return false;
    }
    return true;
  }
};

}  // namespace memtrail::format::codec
