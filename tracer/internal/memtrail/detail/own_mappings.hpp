// The tracer's own mappings, by purpose: MEMTRAIL_MEMORY_DEBUG=1 prints at
// exit, per purpose, the bytes mapped and resident at the process's peak RSS
// and at the end (own_mappings.cpp). Without PR_SET_VMA_ANON_NAME (not on
// every kernel) /proc/PID/smaps cannot tell the tracer's anonymous mappings
// from the program's once they interleave: this accounting can, exactly.
//
// Every mapping the tracer makes for itself is noted here where it is made.
// Mappings are rare (chunks of 128 KiB and more), never per event; with the
// variable unset a note is one load and a branch.
//
// The notes are weak symbols defined in libmemtrail.so: the address tables
// (address_table.hpp) are also built into the analyzer and the allocator
// library, where nothing defines them and a note does nothing.
#pragma once

#include <cstddef>

extern "C" {
void memtrail_own_mapped(const void* start, std::size_t bytes, int purpose) __attribute__((weak));
void memtrail_own_unmapped(const void* start, std::size_t bytes) __attribute__((weak));
}

namespace memtrail::detail {

enum class OwnPurpose : int {
  heap_chunks,     // own heap: 1 MiB chunks cut into blocks up to 256 KiB
  heap_large,      // own heap: blocks over 256 KiB (writer and zstd buffers, vectors, scan scratch)
  heap_cached,     // own heap: such blocks given back, kept mapped for the next request
  event_blocks,    // 128 KiB blocks of raw events (block_pool.hpp)
  thread_state,    // per-thread tables, signal stacks, handler queues, the state arena
  stack_trie,      // the stack trie's nodes and indexes (table_memory.hpp)
  address_tables,  // address tables: the live heap, the writer's live blocks, the codec's
  other,           // start-up buffers and single pages
  count
};

inline void note_own_mapped(const void* start, std::size_t bytes, OwnPurpose purpose) noexcept {
  if (&memtrail_own_mapped != nullptr) memtrail_own_mapped(start, bytes, static_cast<int>(purpose));
}
// Any part of a noted mapping, or a whole one.
inline void note_own_unmapped(const void* start, std::size_t bytes) noexcept {
  if (&memtrail_own_unmapped != nullptr) memtrail_own_unmapped(start, bytes);
}

// MEMTRAIL_MEMORY_DEBUG set: the writer samples (sample_own_mappings, at
// most every 20 ms) and the session's end reports.
bool own_memory_debug() noexcept;
void sample_own_mappings() noexcept;
// A sample now, whenever the last was: where the tracer holds the most
// (the exit scan's scratch, before it goes). The report gives this sample
// a line of its own ("resident at the exit scan").
void sample_own_mappings_now() noexcept;
void report_own_mappings() noexcept;

}  // namespace memtrail::detail
