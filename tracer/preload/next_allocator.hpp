// The allocator the program would have used without us: the next definition
// of each heap function after libmemtrail_preload.so (dlsym(RTLD_NEXT)) —
// glibc's, or jemalloc's / tcmalloc's / mimalloc's when the program links or
// preloads one of them (`memtrail run` puts our preload first).
//
// Hot path: one indirect call through a pointer resolved once. The pointers
// start at bootstrap functions that resolve all of them on first use; calls
// made while dlsym runs (it calls calloc and malloc) are served from a small
// static arena, whose blocks free() ignores and realloc() copies out of.
#pragma once

#include <cstddef>
#include <cstdint>

#include "memtrail/detail/signals.hpp"

namespace memtrail::preload {

struct NextAllocator {
  void* (*malloc)(std::size_t);
  void (*free)(void*);
  void* (*calloc)(std::size_t, std::size_t);
  void* (*realloc)(void*, std::size_t);
  int (*posix_memalign)(void**, std::size_t, std::size_t);
  void* (*aligned_alloc)(std::size_t, std::size_t);
  void* (*memalign)(std::size_t, std::size_t);
  void* (*valloc)(std::size_t);
  void* (*pvalloc)(std::size_t);
  std::size_t (*malloc_usable_size)(void*);
};
extern NextAllocator g_next;

// The bootstrap arena's bounds (static storage, so constant after load).
extern char g_arena[];
inline constexpr std::size_t kArenaBytes = 64 * 1024;
inline bool in_bootstrap_arena(const void* p) {
  return reinterpret_cast<std::uintptr_t>(p) - reinterpret_cast<std::uintptr_t>(g_arena) <
         kArenaBytes;
}

// Marks the thread as inside the real allocator for the call's duration: a
// fatal signal sent from outside meanwhile is raised again once it returns
// (memtrail/detail/signals.hpp, t_in_real_allocator). Two thread-local stores and
// a load per call.
struct RealAllocatorCall {
  [[gnu::always_inline]] RealAllocatorCall() { detail::t_in_real_allocator = true; }
  [[gnu::always_inline]] ~RealAllocatorCall() {
    detail::t_in_real_allocator = false;
    if (__builtin_expect(detail::t_deferred_signal != 0, 0)) detail::raise_deferred_signal();
  }
  RealAllocatorCall(const RealAllocatorCall&) = delete;
  RealAllocatorCall& operator=(const RealAllocatorCall&) = delete;
};
template <class Call>
[[gnu::always_inline]] inline auto real_allocator(Call call) {
  RealAllocatorCall inside;
  return call();
}

// Frees through the next allocator; blocks of the bootstrap arena are never
// given back (they are few and tiny: dlsym's error buffer).
[[gnu::always_inline]] inline void next_free(void* p) {
  if (__builtin_expect(in_bootstrap_arena(p), 0)) return;
  real_allocator([p] { g_next.free(p); });
}

// realloc of a bootstrap-arena block: a new block from the next allocator.
void* realloc_from_arena(void* old, std::size_t n);
// The usable size of a bootstrap-arena block.
std::size_t arena_block_size(const void* p);

// Resolves the next allocator now if no call has yet (idempotent).
void resolve_next_allocator();

// heap_is_glibc() is declared in preload_state.hpp.

// True when the next malloc_usable_size answers for the next malloc's
// blocks: glibc's for glibc's heap, or one the program's allocator defines.
// An allocator without one (a preloaded allocator of the program's) leaves
// the name to glibc's, which would read its blocks as glibc chunks.
bool next_usable_size_known();

}  // namespace memtrail::preload
