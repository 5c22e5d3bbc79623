// The writer's twin of format::ThreadCodecState (format_layout.hpp): the
// same predictions, so the same bytes, held in structures made for the
// questions the encoder asks on every event. The reader keeps the layout of
// format_layout.hpp (it asks the inverse questions: "which address has
// index i"); the encoder asks "which index has address a", so it keeps
// exact address -> position indexes instead of scanning:
// - the size cache and the fresh-end ring are searched by comparing the low
//   32 bits of every entry at once (SSE2), then checking the full value;
// - RecentFrees' address index is exact and windowed (codec_twin_state.hpp);
// - ClassFrees keeps its per-bucket (class, count) apart from the address
//   lists, so the class check touches one small array.
// Every decision below mirrors the function of format_layout.hpp it names;
// tests/format and the before/after `cmp` of re-encoded traces check that.
#pragma once

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <array>
#include <bit>
#include <cstdint>
#include <cstring>

#include "codec_twin_state.hpp"

namespace memtrail::format {

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

struct EncoderThreadState : CodecTwinState {
  std::uint64_t stack_code(int kind, std::uint32_t stack) const {
    return stack == prev_stack[kind] ? 0 : std::uint64_t{stack} + 1;
  }
  // --- size cache (ThreadCodecState::find_size / insert_size) ---
  // Sizes in the slots are distinct and never 0 (a size is inserted only
  // when find_size missed, and size 0 is coded as kSizeZero), so the slot
  // holding `size` is unique: a compare of the low 32 bits of all slots at
  // once, then a check of the full value, finds it.
  std::array<std::uint64_t, kSizeSlots> slot_size{};
  std::array<std::uint64_t, kSizeSlots> slot_address{};
  alignas(16) std::array<std::uint32_t, kSizeSlots> slot_size_low{};
  int next_slot = 0;

  int find_size(std::uint64_t size) const {
    std::uint64_t candidates = match_low32(slot_size_low.data(), kSizeSlots, size);
    for (; candidates; candidates &= candidates - 1) {
      int i = std::countr_zero(candidates);
      if (slot_size[i] == size) return i;
    }
    return -1;
  }
  int insert_size(std::uint64_t size) {
    int slot = next_slot;
    next_slot = (next_slot + 1) % kSizeSlots;
    slot_size[slot] = size;
    slot_size_low[slot] = static_cast<std::uint32_t>(size);
    slot_address[slot] = last_address;
    return slot;
  }

  // RecentFrees::find: the newest push of `a` in the window, if still live.
  bool recent_find(std::uint64_t a, std::uint64_t& seq) const {
    int i = index_find(a);
    if (i < 0) return false;
    std::uint64_t s = index_seq[i];
    unsigned r = ring_slot(s);
    if (!((live[r >> 6] >> (r & 63)) & 1)) return false;
    seq = s;
    return true;
  }
  void recent_take(std::uint64_t seq) {
    unsigned r = ring_slot(seq);
    live[r >> 6] &= ~(std::uint64_t{1} << (r & 63));
  }
  // RecentFrees::rank_of: the live entries pushed after `seq`.
  int recent_rank(std::uint64_t seq) const {
    int n = 0;
    for (std::uint64_t s = seq + 1; s < pushed;) {
      unsigned i = ring_slot(s), bit = i & 63;
      std::uint64_t span = std::min<std::uint64_t>(64 - bit, pushed - s);
      std::uint64_t w = live[i >> 6] >> bit;
      if (span < 64) w &= (std::uint64_t{1} << span) - 1;
      n += popcount64(w);
      s += span;
    }
    return n;
  }

  // --- ClassFrees, with the bucket heads apart from the address lists ---
  struct ClassHead {
    std::uint64_t cls = 0;
    int count = 0;
  };
  std::array<ClassHead, kClassBuckets> class_head{};
  std::array<std::array<std::uint64_t, kClassDepth>, kClassBuckets> class_address{};

  // ClassFrees::rank: position of `a` in the class's list, -1 when absent.
  int class_rank(int bucket, std::uint64_t cls, std::uint64_t a) const {
    const ClassHead& h = class_head[bucket];
    if (h.cls != cls) return -1;
    const auto& list = class_address[bucket];
    for (int i = 0; i < h.count; ++i)
      if (list[i] == a) return i;
    return -1;
  }
  void class_take(int bucket, int rank) {
    ClassHead& h = class_head[bucket];
    auto& list = class_address[bucket];
    for (int i = rank; i + 1 < h.count; ++i) list[i] = list[i + 1];
    --h.count;
  }
  void class_push(std::uint64_t cls, std::uint64_t a) {
    int bucket = ClassFrees::bucket_of(cls);
    ClassHead& h = class_head[bucket];
    if (h.cls != cls) {
      h.cls = cls;
      h.count = 0;
    }
    int n = h.count < kClassDepth ? h.count : kClassDepth - 1;
    auto& list = class_address[bucket];
    for (int i = n; i > 0; --i) list[i] = list[i - 1];  // short: no memmove call
    list[0] = a;
    h.count = n + 1;
  }

  // --- fresh ends (ThreadCodecState::fresh_ring) ---
  std::array<std::uint64_t, kFreshEnds> fresh_ring{};
  alignas(16) std::array<std::uint32_t, kFreshEnds> fresh_low{};
  std::uint64_t fresh_pushed = 0;
  void push_fresh(std::uint64_t end) {
    unsigned k = static_cast<unsigned>(fresh_pushed++ & (kFreshEnds - 1));
    fresh_ring[k] = end;
    fresh_low[k] = static_cast<std::uint32_t>(end);
  }
  // The highest ring position holding `address` (as AllocCandidates::index_of
  // picks it), -1 when none.
  int fresh_find(std::uint64_t address) const {
    std::uint64_t candidates = match_low32(fresh_low.data(), kFreshEnds, address);
    while (candidates) {
      int k = 63 - std::countl_zero(candidates);
      if (fresh_ring[k] == address) return k;
      candidates &= ~(std::uint64_t{1} << k);
    }
    return -1;
  }

  // ThreadCodecState::push_freed.
  void push_freed(std::uint64_t address, std::uint64_t size) {
    recent_push(address);
    if (size != 0) class_push(chunk_class(size), address);
  }

  // AllocCandidates(st, cls).index_of(address) followed by
  // take_freed(cls, address), in one pass over each structure.
  bool alloc_index_and_take(std::uint64_t cls, std::uint64_t address, std::uint64_t& index) {
    int bucket = ClassFrees::bucket_of(cls);
    const ClassHead& h = class_head[bucket];
    std::uint64_t n = h.cls == cls && h.count > 0 ? static_cast<std::uint64_t>(h.count) : 0;
    int crank = class_rank(bucket, cls, address);
    std::uint64_t seq = 0;
    bool in_recent = recent_find(address, seq);
    bool found = true;
    if (crank >= 0) {
      index = static_cast<std::uint64_t>(crank);
    } else if (int k = fresh_find(address); k >= 0) {
      index = n + ((fresh_pushed - 1 - static_cast<std::uint64_t>(k)) & (kFreshEnds - 1));
    } else if (in_recent) {
      index = n + kFreshEnds + static_cast<std::uint64_t>(recent_rank(seq));
    } else {
      found = false;
    }
    if (in_recent) recent_take(seq);
    if (crank >= 0) class_take(bucket, crank);
    return found;
  }
};

}  // namespace memtrail::format
