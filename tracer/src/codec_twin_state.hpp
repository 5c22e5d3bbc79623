// What the writer's and the reader's twins of format::ThreadCodecState
// (encoder_state.hpp, decoder_state.hpp) hold alike: the per-kind history,
// and RecentFrees as a ring with a live bitmap plus an exact windowed address
// index. The reference (format_layout.hpp) keeps an AddressTable of addresses
// that left the window and rebuilds it every 3072 pushes; here an entry
// leaving the window leaves the index, so it stays at 2048 slots (24 KiB), in
// cache.
//
// Kept apart from AddressTable (memtrail/detail/address_table.hpp), with its
// deletion rule (probe_gap.hpp) shared: the window bounds it to 1024 members,
// so it lives inline in every per-thread state, which the decoder resets and
// reuses each chunk; an AddressTable is two mappings of its own per state and
// reads an entry besides its index slot on every hit (bench_address_table:
// Find at 10^4 keys, dense vs inline). Keys and sequence numbers lie in two
// arrays, so a probe reads 8-byte keys only.
#pragma once

#include <array>
#include <cstdint>

#include "format_layout.hpp"
#include "memtrail/detail/probe_gap.hpp"

namespace memtrail::format {

// Population count without relying on the popcnt instruction (the build
// targets baseline x86-64, where std::popcount becomes a libgcc call).
inline int popcount64(std::uint64_t x) {
  x = x - ((x >> 1) & 0x5555555555555555ull);
  x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
  x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
  return static_cast<int>((x * 0x0101010101010101ull) >> 56);
}

struct CodecTwinState {
  // --- as ThreadCodecState ---
  std::uint64_t last_time = 0;
  std::uint64_t last_address = 0;
  std::uint32_t last_pool = 0;
  std::array<std::uint32_t, kEventKindCount> last_stack{};
  std::array<std::uint32_t, kEventKindCount> prev_stack{};
  std::array<std::uint8_t, kEventKindCount> last_detail{};

  void set_stack(int kind, std::uint32_t stack) {
    if (stack != last_stack[kind]) {
      prev_stack[kind] = last_stack[kind];
      last_stack[kind] = stack;
    }
  }

  // --- RecentFrees: ring, live bitmap, exact windowed address index ---
  static constexpr unsigned kFreeIndex = 2 * kRecentFrees;  // power of two
  std::array<std::uint64_t, kRecentFrees> ring{};
  std::array<std::uint64_t, kRecentFrees / 64> live{};
  std::uint64_t pushed = 0;
  // address -> newest push of it within the window; key 0 = empty (a freed
  // address of 0 is never pushed).
  std::array<std::uint64_t, kFreeIndex> index_key{};
  std::array<std::uint32_t, kFreeIndex> index_seq{};

  static unsigned ring_slot(std::uint64_t seq) {
    return static_cast<unsigned>(seq & (kRecentFrees - 1));
  }
  static unsigned free_home(std::uint64_t a) {
    return static_cast<unsigned>((a * 0x9e3779b97f4a7c15ull) >> 53);  // 11 bits
  }
  static_assert(kFreeIndex == 2048, "free_home yields 11 bits");
  int index_find(std::uint64_t a) const {
    for (unsigned i = free_home(a);; i = (i + 1) & (kFreeIndex - 1)) {
      if (index_key[i] == a) return static_cast<int>(i);
      if (index_key[i] == 0) return -1;
    }
  }
  void index_erase(unsigned hole) {
    std::size_t last = close_probe_gap(
        hole, kFreeIndex - 1, [&](std::size_t j) { return index_key[j] == 0; },
        [&](std::size_t j) { return std::size_t{free_home(index_key[j])}; },
        [&](std::size_t from, std::size_t to) {
          index_key[to] = index_key[from];
          index_seq[to] = index_seq[from];
        });
    index_key[last] = 0;
  }
  // RecentFrees::push. The entry leaving the window leaves the index too
  // when it is its address's newest push. Sequence numbers fit 32 bits: a
  // chunk holds far fewer than 2^32 events.
  void recent_push(std::uint64_t a) {
    if (pushed >= kRecentFrees) {
      std::uint64_t old = pushed - kRecentFrees;
      int i = index_find(ring[ring_slot(old)]);
      if (i >= 0 && index_seq[i] == static_cast<std::uint32_t>(old))
        index_erase(static_cast<unsigned>(i));
    }
    unsigned s = ring_slot(pushed);
    ring[s] = a;
    live[s >> 6] |= std::uint64_t{1} << (s & 63);
    unsigned i = free_home(a);
    while (index_key[i] != 0 && index_key[i] != a) i = (i + 1) & (kFreeIndex - 1);
    index_key[i] = a;
    index_seq[i] = static_cast<std::uint32_t>(pushed);
    ++pushed;
  }
};

}  // namespace memtrail::format
