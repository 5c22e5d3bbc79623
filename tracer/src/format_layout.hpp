// Constants of the .mtr byte layout and the per-chunk prediction state that
// the writer and the reader must evolve identically. docs/trace-format.md is
// the prose version of this file; change both together.
#pragma once

#include <array>
#include <cstdint>

#include "memtrail/event.hpp"

namespace memtrail::format {

// File header: magic, u16 version, u16 flags, u32 payload length, payload, u32 crc32.
inline constexpr unsigned char kMagic[8] = {0x89, 'M', 'T', 'R', 'A', 'C', 'E', '\n'};
inline constexpr std::uint32_t kMaxHeaderPayload = 1u << 20;

// Chunk frame: u8 type, u32 stored, u32 raw, u32 events, u32 crc32(bytes 0..12),
// then `stored` payload bytes, then u32 crc32(payload).
inline constexpr int kFrameHeaderBytes = 17;
inline constexpr int kFrameTrailerBytes = 4;
inline constexpr std::uint8_t kChunkData = 1;
inline constexpr std::uint8_t kChunkEnd = 2;
inline constexpr std::uint32_t kMaxRawChunk = 64u << 20;
inline constexpr std::size_t kTargetRawChunk = 1u << 20;
// Level 6 saves ~3% on the churn workload for ~30% more writer CPU.
inline constexpr int kZstdLevel = 3;

// The byte streams of a data chunk, in payload order. *High streams hold the
// continuation bytes of split varints whose first byte is in the stream before.
enum Stream : int {
  kOps = 0,
  kTime = 1,
  kAddr = 2,
  kSize = 3,
  kMisc = 4,
  kTimeHigh = 5,
  kAddrHigh = 6,
  kSizeHigh = 7,
  kStreamCount = 8
};

// OPS stream items. Bit 7 set: a table record, tag in bits 0..6.
inline constexpr std::uint8_t kRecordBit = 0x80;
enum RecordTag : std::uint8_t {
  kTagString = 1,
  kTagModule = 2,
  kTagThread = 3,
  kTagPool = 4,
  kTagStackNode = 5,
  kTagScope = 6,
  kTagThreadSwitch = 7,
};
// Bit 7 clear: an event; kind in bits 0..4, flags:
inline constexpr std::uint8_t kOpKindMask = 0x1f;
// Address by reference: for a free, to an earlier alloc of this chunk (ADDR
// holds the distance back in alloc ordinals); for an alloc/reuse, to a block
// the same thread freed recently (ADDR holds its rank in RecentFrees).
inline constexpr std::uint8_t kOpAddrRef = 0x20;
inline constexpr std::uint8_t kOpTimeBack = 0x40;  // time delta is negative

// Field mask byte following each event op.
inline constexpr std::uint8_t kMaskPool = 0x01;
inline constexpr std::uint8_t kMaskStack = 0x02;
inline constexpr std::uint8_t kMaskDetail = 0x04;
inline constexpr int kMaskSizeShift = 3;  // 2 bits: SizeMode
inline constexpr std::uint8_t kMaskRequested = 0x20;
inline constexpr std::uint8_t kMaskAux = 0x40;
inline constexpr std::uint8_t kMaskAddr = 0x80;

enum SizeMode : std::uint8_t { kSizeZero = 0, kSizeCached = 1, kSizeExplicit = 2, kSizeOfRef = 3 };

inline constexpr int kSizeSlots = 32;
inline constexpr int kRecentFrees = 64;

// The addresses a thread freed most recently, newest first. Allocators hand
// recently freed blocks out again (glibc's tcache is a per-thread LIFO), so an
// alloc's address is often one of these: a rank costs a byte, a delta three.
struct RecentFrees {
  std::array<std::uint64_t, kRecentFrees> address{};
  int count = 0;

  int find(std::uint64_t a) const {
    for (int i = 0; i < count; ++i)
      if (address[i] == a) return i;
    return -1;
  }
  void take(int rank) {  // the block is live again
    for (int i = rank; i + 1 < count; ++i) address[i] = address[i + 1];
    --count;
  }
  void push(std::uint64_t a) {
    int n = count < kRecentFrees ? count : kRecentFrees - 1;
    for (int i = n; i > 0; --i) address[i] = address[i - 1];
    address[0] = a;
    count = n + 1;
  }
};

// Prediction state of one thread within one chunk. Reset at every chunk.
struct ThreadCodecState {
  std::uint64_t last_time = 0;
  std::uint64_t last_address = 0;
  std::uint32_t last_pool = 0;
  std::array<std::uint32_t, kEventKindCount> last_stack{};
  std::array<std::uint8_t, kEventKindCount> last_detail{};
  std::array<std::uint64_t, kSizeSlots> slot_size{};
  std::array<std::uint64_t, kSizeSlots> slot_address{};
  int next_slot = 0;
  RecentFrees recent_frees;

  int find_size(std::uint64_t size) const {
    for (int i = 0; i < kSizeSlots; ++i)
      if (slot_size[i] == size) return i;
    return -1;
  }
  int insert_size(std::uint64_t size) {
    int slot = next_slot;
    next_slot = (next_slot + 1) % kSizeSlots;
    slot_size[slot] = size;
    slot_address[slot] = last_address;
    return slot;
  }
};

inline bool is_alloc_kind(EventKind k) {
  return k == EventKind::alloc || k == EventKind::reuse;
}

// `requested` when the mask's Requested bit is clear.
inline std::uint64_t default_requested(EventKind k, std::uint64_t size) {
  return is_alloc_kind(k) ? size : 0;
}

}  // namespace memtrail::format
