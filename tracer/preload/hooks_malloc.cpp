// The C allocation functions: malloc, free, calloc, realloc, reallocarray,
// posix_memalign, aligned_alloc, memalign, valloc, pvalloc, and
// malloc_usable_size (for the bootstrap arena's blocks).
//
// They forward to the next definition (next_allocator.hpp): glibc's, or the
// jemalloc / tcmalloc / mimalloc the program links or preloads; the
// tracer's own calls are served by its own heap (tracer_heap.hpp).
#include <errno.h>

#include <cstddef>
#include <cstdint>

#include "block_scrub.hpp"
#include "early_events.hpp"
#include "linker_blocks.hpp"
#include "next_allocator.hpp"
#include "own_dependencies.hpp"
#include "preload_state.hpp"
#include "program_entry.hpp"
#include "tracer_heap.hpp"

using memtrail::AllocFn;
using namespace memtrail::preload;
namespace own = memtrail::detail;

namespace {

// Records an allocation and remembers it if ld.so made it. Before the
// recorder starts, the event waits in the early buffer.
[[gnu::always_inline]] inline void after_alloc(void* p, std::size_t n, AllocFn fn,
                                               std::size_t alignment, const void* caller) {
  if (__builtin_expect(memtrail::tracing(), 0) && p != nullptr) {
    scrub_new_block(p, n, fn);
    trace_alloc(p, n, fn, alignment);
    if (__builtin_expect(linker_caller(caller), 0)) linker_block_insert(p);
  } else if (__builtin_expect(early_open(), 0) && p != nullptr) {
    early_alloc(p, n, fn, alignment, caller);
  }
}

[[gnu::always_inline]] inline void before_free(void* p, AllocFn fn) {
  if (__builtin_expect(memtrail::tracing(), 0) && p != nullptr) {
    if (!trace_free(p, 0, fn)) remember_late_free(p);
    linker_block_erase(p);
  } else if (__builtin_expect(early_open(), 0) && p != nullptr) {
    early_free(p, 0, fn);
  }
}

// The old block of a failed realloc, recorded free before the call: live
// again, with the size it can hold (its requested size is the recorder's
// history, not known here). Rare: realloc fails only when memory is short.
// An allocator of the program's without malloc_usable_size cannot say (glibc's
// would read its block as a glibc chunk: SIGSEGV): the block comes back with
// size 0.
[[gnu::noinline]] void restore_after_failed_realloc(void* old, const void* caller) {
  int saved = errno;  // the program reads realloc's ENOMEM
  std::size_t size = next_usable_size_known() ? g_next.malloc_usable_size(old) : 0;
  after_alloc(old, size, AllocFn::realloc, 0, caller);
  errno = saved;
}

// Before the preload's constructor, a call from a library only the tracer
// needs (libstdc++'s exception pool in a C program) is the tracer's: served
// by its own heap, never recorded (own_dependencies.hpp). When the own heap
// cannot map (a tight `ulimit -v`) the call goes on to the program's
// allocator, as it did before: a pool in the program's heap beats none.
[[gnu::always_inline]] inline bool early_call_is_ours(const void* caller) {
  return __builtin_expect(early_open(), 0) && early_caller_only_ours(caller);
}

}  // namespace

extern "C" {

MEMTRAIL_PROGRAM_ENTRY void* malloc(std::size_t n) {
  if (tracer_is_calling()) return own::own_malloc(n);
  if (early_call_is_ours(__builtin_return_address(0)))
    if (void* own_block = own::own_malloc(n)) return own_block;
  void* p = real_allocator([n] { return g_next.malloc(n); });
  after_alloc(p, n, AllocFn::malloc, 0, __builtin_return_address(0));
  return p;
}

MEMTRAIL_PROGRAM_ENTRY void free(void* p) {
  if (own::own_heap_owns(p)) return own::own_free(p);
  if (__builtin_expect(in_bootstrap_arena(p), 0)) return;  // never recorded
  before_free(p, AllocFn::free);
  real_allocator([p] { g_next.free(p); });
}

MEMTRAIL_PROGRAM_ENTRY void* calloc(std::size_t count, std::size_t size) {
  if (tracer_is_calling()) return own::own_calloc(count, size);
  if (early_call_is_ours(__builtin_return_address(0)))
    if (void* own_block = own::own_calloc(count, size)) return own_block;
  void* p = real_allocator([=] { return g_next.calloc(count, size); });
  after_alloc(p, count * size, AllocFn::calloc, 0, __builtin_return_address(0));
  return p;
}

// A realloc is a free of the old block followed by an alloc of the new one
// (also when glibc grows it in place), as heaptrack records it. Free first:
// the old block's lifetime ends before the new one's begins. The free is
// recorded before the real realloc: a moved block's old address is free as
// soon as the real realloc lets go of the arena, and another thread's alloc
// of it must come after this free in the trace (issue 26 item 12: recorded
// after the call, it could come first and leave an unmatched free). A
// failed realloc left the old block live: its alloc is recorded again.
[[gnu::always_inline]] static inline void* traced_realloc(void* old, std::size_t n,
                                                          const void* caller) {
  if (own::own_heap_owns(old) || (old == nullptr && tracer_is_calling()))
    return own::own_realloc(old, n);
  // A bootstrap-arena block was never recorded; its copy is a new block.
  if (__builtin_expect(in_bootstrap_arena(old), 0)) {
    void* p = realloc_from_arena(old, n);
    after_alloc(p, n, AllocFn::realloc, 0, caller);
    return p;
  }
  if (!__builtin_expect(memtrail::tracing() || early_open(), 0))
    return real_allocator([=] { return g_next.realloc(old, n); });
  // Only the bytes past the old block are new (and may hold stale addresses).
  std::size_t old_usable = memtrail::tracing() ? scrub_old_usable(old) : 0;
  if (old != nullptr) before_free(old, AllocFn::realloc);
  void* p = real_allocator([=] { return g_next.realloc(old, n); });
  if (p == nullptr && n != 0) {  // failed: the old block is untouched, and live again
    if (old != nullptr) restore_after_failed_realloc(old, caller);
    return nullptr;
  }
  if (memtrail::tracing()) scrub_grown_block(p, old_usable, n);
  after_alloc(p, n, AllocFn::realloc, 0, caller);
  return p;
}

MEMTRAIL_PROGRAM_ENTRY void* realloc(void* old, std::size_t n) {
  return traced_realloc(old, n, __builtin_return_address(0));
}

MEMTRAIL_PROGRAM_ENTRY void* reallocarray(void* old, std::size_t count, std::size_t size) {
  std::size_t n;
  if (__builtin_mul_overflow(count, size, &n)) {
    errno = ENOMEM;
    return nullptr;
  }
  return traced_realloc(old, n, __builtin_return_address(0));
}

MEMTRAIL_PROGRAM_ENTRY int posix_memalign(void** out, std::size_t alignment, std::size_t n) {
  if (tracer_is_calling()) {
    void* p = own::own_aligned(alignment, n);
    if (p == nullptr) return errno;
    *out = p;
    return 0;
  }
  void* p = nullptr;
  int error = real_allocator([&] { return g_next.posix_memalign(&p, alignment, n); });
  if (error != 0) return error;
  after_alloc(p, n, AllocFn::aligned, alignment, __builtin_return_address(0));
  *out = p;
  return 0;
}

MEMTRAIL_PROGRAM_ENTRY void* aligned_alloc(std::size_t alignment, std::size_t n) {
  if (tracer_is_calling()) return own::own_aligned(alignment, n);
  void* p = real_allocator([=] { return g_next.aligned_alloc(alignment, n); });
  after_alloc(p, n, AllocFn::aligned, alignment, __builtin_return_address(0));
  return p;
}

MEMTRAIL_PROGRAM_ENTRY void* memalign(std::size_t alignment, std::size_t n) {
  if (tracer_is_calling()) return own::own_aligned(alignment, n);
  void* p = real_allocator([=] { return g_next.memalign(alignment, n); });
  after_alloc(p, n, AllocFn::aligned, alignment, __builtin_return_address(0));
  return p;
}

MEMTRAIL_PROGRAM_ENTRY void* valloc(std::size_t n) {
  if (tracer_is_calling()) return own::own_aligned(4096, n);
  void* p = real_allocator([=] { return g_next.valloc(n); });
  after_alloc(p, n, AllocFn::aligned, 4096, __builtin_return_address(0));
  return p;
}

MEMTRAIL_PROGRAM_ENTRY void* pvalloc(std::size_t n) {
  if (tracer_is_calling()) return own::own_aligned(4096, (n + 4095) & ~std::size_t{4095});
  void* p = real_allocator([=] { return g_next.pvalloc(n); });
  after_alloc(p, n, AllocFn::aligned, 4096, __builtin_return_address(0));
  return p;
}

MEMTRAIL_PROGRAM_ENTRY std::size_t malloc_usable_size(void* p) {
  if (own::own_heap_owns(p)) return own::own_usable_size(p);
  if (__builtin_expect(in_bootstrap_arena(p), 0)) return arena_block_size(p);
  return g_next.malloc_usable_size(p);
}

}  // extern "C"
