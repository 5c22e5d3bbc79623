// Constants of the .mtr byte layout. The per-chunk prediction state that the
// writer and the reader evolve identically is codec/thread_model.hpp.
// docs/trace-format.md is the prose version of both; change them together.
#pragma once

#include <cstddef>
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
// Level 1: the chunks of a 4M-event churn trace compress 2.3x faster than
// at level 3 and come out 1.2% bigger (8.97 vs 8.87 MB); level -1 is
// another 23% faster but 18% bigger, level 6 ~3% smaller for ~30% more
// writer CPU than level 3.
inline constexpr int kZstdLevel = 1;

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
  // A stack node whose id and parent are coded from the chunk's previous
  // node (record_layout.hpp kStackNodeDelta); the writer's only node record.
  // kTagStackNode (absolute ids) is still read: traces written before it.
  kTagStackNodeDelta = 8,
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
inline constexpr int kRecentFrees = 1024;

// glibc's chunk size for a request: header word added, rounded up to 16,
// at least 32. tcache and the bins hand a freed block out again to a request
// of the same chunk size, newest first, so this is the key of ClassFrees.
inline std::uint64_t chunk_class(std::uint64_t size) {
  std::uint64_t c = (size + 8 + 15) & ~std::uint64_t{15};
  return c < 32 ? 32 : c;
}

inline constexpr int kClassBuckets = 256;
inline constexpr int kFreshEnds = 64;
inline constexpr int kClassDepth = 16;
// Bounds the reader's per-chunk state (each thread's ClassFrees is ~37 KiB):
// the writer starts a new chunk before a chunk would hold more threads.
inline constexpr std::size_t kMaxThreadsPerChunk = 1024;
// Coarsest time resolution a header may declare (1 s).
inline constexpr std::uint32_t kMaxTimeResolution = 1'000'000'000;
inline constexpr std::uint64_t kSmallClassLimit = 1040;  // glibc's largest tcache chunk

inline bool is_alloc_kind(EventKind k) {
  return k == EventKind::alloc || k == EventKind::reuse;
}

// `requested` when the mask's Requested bit is clear.
inline std::uint64_t default_requested(EventKind k, std::uint64_t size) {
  return is_alloc_kind(k) ? size : 0;
}

}  // namespace memtrail::format
