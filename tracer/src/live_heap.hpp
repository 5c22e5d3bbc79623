// The writer's map of live heap blocks (address -> LiveEntry), read by the
// exit-time reachability scan. Every heap event touches it, so it is made
// for the writer's two questions: an alloc enters a block (and learns
// whether one was there: its free was lost), a free finds and removes its
// block in one probe sequence. Each entry also holds the block's place in
// the TraceWriter's chunks, so the encoder needs no table of its own for
// heap blocks (TraceWriter::add_tracked_event). The table is the project's
// AddressTable: 40-byte entries, densely, and an 8-byte index slot each at
// most 3/4 full, so a program with 300,000 live blocks pays ~16 MiB, not
// the 40 MiB of the half-full inline table it replaced.
#pragma once

#include <cstddef>
#include <cstdint>

#include "memtrail/detail/address_table.hpp"
#include "memtrail/trace_file.hpp"

namespace memtrail::runtime {

struct LiveEntry {
  std::uint64_t size;
  std::uint64_t time_ns;
  std::uint32_t stack, thread;
  TraceWriter::BlockRef chunk_ref;  // set by the encoder
};

class LiveHeap {
 public:
  std::size_t size() const { return table_.size(); }

  // Enters `entry` at `address` and returns where it is stored (valid until
  // the next put or take); `had` says whether a block was already there
  // (then `replaced` holds it).
  LiveEntry* put(std::uint64_t address, const LiveEntry& entry, bool& had, LiveEntry& replaced) {
    auto [stored, fresh] = table_.try_emplace(address);
    had = !fresh;
    if (had) replaced = *stored;
    // Field by field: `entry` was just built by narrower stores, and a
    // struct copy read it back with 16-byte loads spanning them, which
    // cannot take their data from the store buffer (a store-forwarding
    // stall on every alloc: 14 % of the drain's merge loop on tight-pairs).
    stored->size = entry.size;
    stored->time_ns = entry.time_ns;
    stored->stack = entry.stack;
    stored->thread = entry.thread;
    stored->chunk_ref = entry.chunk_ref;
    return stored;
  }

  // Removes the block at `address` into `out`; false when there is none.
  bool take(std::uint64_t address, LiveEntry& out) { return table_.take(address, out); }

  template <class Fn>
  void for_each(Fn&& fn) const {
    table_.for_each([&](std::uint64_t address, const LiveEntry& e) { fn(address, e); });
  }

 private:
  detail::AddressTable<LiveEntry> table_;
};

}  // namespace memtrail::runtime
