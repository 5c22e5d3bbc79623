// State shared by the interposers of libmemtrail_preload.so, and the inline
// helpers that turn one intercepted call into one recorder event.
//
// Every interposer calls the real function (the next allocator's:
// next_allocator.hpp) first and records afterwards, and only when tracing is
// on (or, before the recorder starts, into the early buffer: early_events.hpp).
#pragma once

#include <cstddef>
#include <cstdint>

#include "late_frees.hpp"
#include "memtrail/detail/recording.hpp"
#include "memtrail/recorder.hpp"

namespace memtrail::preload {

extern std::uint32_t g_heap_pool;  // "malloc", PoolKind::heap
extern std::uint32_t g_mmap_pool;  // "mmap", PoolKind::mmap

// Keeps LD_PRELOAD and the MEMTRAIL_* variables as they are now: an exec
// whose environment lost them gets them back (hooks_exec.cpp).
void save_tracing_environment();

// Registers the at_quick_exit handler that finishes the trace (once).
void finish_trace_at_quick_exit();

// skip_frames = 1 drops the interposer's own frame: the innermost frame of a
// recorded stack is the program's call site.
[[gnu::always_inline]] inline void trace_alloc(const void* block, std::size_t requested, AllocFn fn,
                                               std::size_t alignment = 0) {
  Event e;
  e.kind = EventKind::alloc;
  e.pool = g_heap_pool;
  e.address = reinterpret_cast<std::uintptr_t>(block);
  // `size` is the requested size too: leak and peak figures then match what
  // the program asked for (as Valgrind and LeakSanitizer report), not glibc's
  // rounding.
  e.size = requested;
  e.requested = requested;
  e.detail = static_cast<std::uint8_t>(fn);
  e.aux = alignment;
  settle_late_free(block);  // a late free of this address first
  detail::record_slow(e, 1);
}

// False on a thread past its exit notice: the free was not recorded.
[[gnu::always_inline]] inline bool trace_free(const void* block, std::size_t size, AllocFn fn) {
  Event e;
  e.kind = EventKind::free;
  e.pool = g_heap_pool;
  e.address = reinterpret_cast<std::uintptr_t>(block);
  e.size = size;
  e.detail = static_cast<std::uint8_t>(fn);
  // No stack: the alloc's stack already identifies the block.
  return detail::record_unwalked(e);
}

// True when the program's malloc (the next definition after ours) is glibc's:
// only then may the tracer rely on glibc's chunk layout (the exit scan's
// chunk-header rule) and on mallinfo2. Defined in next_allocator.cpp.
bool heap_is_glibc();

// The process id the current trace belongs to; updated in the fork child.
// A vfork child (same memory, different pid) sees a mismatch and must not
// touch the recorder.
extern int g_traced_pid;

// preload_main.cpp: starts the recorder; `attach_output` != null for
// `memtrail attach` (attach_entry.cpp). False when the trace could not start.
bool start_recorder(const char* attach_output);

}  // namespace memtrail::preload
