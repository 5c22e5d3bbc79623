// Counters the recorder keeps for its tests (tests/tracer): what the stack
// cache served and how often program threads drained. Not installed.
#pragma once

#include <cstdint>

namespace memtrail::detail {

// The calling thread's stack cache counters in the current session
// (tracer/src/stack_cache.hpp): events served from the cache, events that
// unwound, and walks that could not vouch for their chain (a signal frame,
// a slot that did not hold its ip): those chains are not cached. All 0 when
// not tracing or when the cache is off.
struct StackCacheCounts {
  std::uint64_t hits = 0, misses = 0, unwalkable = 0;
  std::uint64_t walks = 0;  // learning walks (unw_step), cached or not
};
StackCacheCounts stack_cache_counts();

// Drain passes program threads made themselves in this session (they do
// when their busy threads fill the cores: drain_sharing.cpp).
std::uint64_t program_thread_drains();

}  // namespace memtrail::detail
