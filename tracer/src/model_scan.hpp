// Which events of a chunk the decoder must keep the glibc address model for.
// The model (each thread's recent frees, class lists and fresh ends) is read
// only to decode an alloc or reuse coded by candidate (kOpAddrRef). A writer
// that fell behind codes chunks without it, and switches it off mid-chunk
// (never on), so many chunks have no such alloc, or none past some point;
// keeping the model up there (a push per free, a take per alloc) is wasted.
// One pass over OPS (two bytes an event) finds the last such alloc; the
// decoder keeps the model only for the events before it. Decoded events and
// errors stay the same: nothing after that alloc reads the model.
#pragma once

#include <cstdint>
#include <limits>

#include "byte_io.hpp"
#include "format_layout.hpp"
#include "record_layout.hpp"  // skip_record

namespace memtrail::format {

// The answer when OPS cannot be read to its end: keep the model for every
// event (the decoder then finds and reports the fault as it always did).
inline constexpr std::uint64_t kModelForAll = std::numeric_limits<std::uint64_t>::max();

// The number of events up to and including the chunk's last alloc or reuse
// coded by candidate: 0 when it has none, kModelForAll when OPS cannot be
// read through. The decoder keeps the model for events numbered (from 1)
// below it. `ops` is taken by value: the caller's position does not move.
inline std::uint64_t events_needing_model(ByteSource ops) {
  constexpr auto kAlloc = static_cast<std::uint8_t>(EventKind::alloc);
  constexpr auto kReuse = static_cast<std::uint8_t>(EventKind::reuse);
  std::uint64_t events = 0, last = 0;
  std::uint8_t op, mask;
  while (ops.u8(op)) {
    if (op & kRecordBit) {
      if (!skip_record(ops, op & ~kRecordBit)) return kModelForAll;
      continue;
    }
    if (!ops.u8(mask)) return kModelForAll;
    ++events;
    std::uint8_t kind = op & kOpKindMask;
    if ((op & kOpAddrRef) && (kind == kAlloc || kind == kReuse)) last = events;
  }
  return last;
}

}  // namespace memtrail::format
