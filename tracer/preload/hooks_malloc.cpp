// The C allocation functions: malloc, free, calloc, realloc, reallocarray,
// posix_memalign, aligned_alloc, memalign, valloc, pvalloc.
//
// They call glibc's __libc_* entry points directly instead of dlsym(RTLD_NEXT)
// pointers: no bootstrap problem (dlsym itself calls calloc) and no indirect
// call on the hot path.
#include <errno.h>

#include <cstddef>
#include <cstdint>

#include "block_scrub.hpp"
#include "linker_blocks.hpp"
#include "preload_state.hpp"

extern "C" {
void* __libc_malloc(std::size_t);
void __libc_free(void*);
void* __libc_calloc(std::size_t, std::size_t);
void* __libc_realloc(void*, std::size_t);
void* __libc_memalign(std::size_t, std::size_t);
void* __libc_valloc(std::size_t);
void* __libc_pvalloc(std::size_t);
}

using memtrail::AllocFn;
using namespace memtrail::preload;

namespace {

// Records an allocation and remembers it if ld.so made it.
[[gnu::always_inline]] inline void after_alloc(void* p, std::size_t n, AllocFn fn,
                                               std::size_t alignment, const void* caller) {
  if (__builtin_expect(memtrail::tracing(), 0) && p != nullptr) {
    scrub_new_block(p, fn);
    trace_alloc(p, n, fn, alignment);
    if (__builtin_expect(linker_caller(caller), 0)) linker_block_insert(p);
  }
}

[[gnu::always_inline]] inline void before_free(void* p, AllocFn fn) {
  if (__builtin_expect(memtrail::tracing(), 0) && p != nullptr) {
    trace_free(p, 0, fn);
    linker_block_erase(p);
  }
}

bool valid_alignment(std::size_t alignment) {
  return alignment != 0 && (alignment & (alignment - 1)) == 0 && alignment % sizeof(void*) == 0;
}

}  // namespace

extern "C" {

[[gnu::visibility("default")]] void* malloc(std::size_t n) {
  void* p = __libc_malloc(n);
  after_alloc(p, n, AllocFn::malloc, 0, __builtin_return_address(0));
  return p;
}

[[gnu::visibility("default")]] void free(void* p) {
  before_free(p, AllocFn::free);
  __libc_free(p);
}

[[gnu::visibility("default")]] void* calloc(std::size_t count, std::size_t size) {
  void* p = __libc_calloc(count, size);
  after_alloc(p, count * size, AllocFn::calloc, 0, __builtin_return_address(0));
  return p;
}

// A realloc is a free of the old block followed by an alloc of the new one
// (also when glibc grows it in place), as heaptrack records it. Free first:
// the old block's lifetime ends before the new one's begins.
[[gnu::always_inline]] static inline void* traced_realloc(void* old, std::size_t n,
                                                          const void* caller) {
  if (!__builtin_expect(memtrail::tracing(), 0)) return __libc_realloc(old, n);
  std::size_t old_usable = scrub_old_usable(old);
  void* p = __libc_realloc(old, n);
  if (p == nullptr && n != 0) return nullptr;  // failed: the old block is untouched
  if (old != nullptr) {
    trace_free(old, 0, AllocFn::realloc);
    linker_block_erase(old);
  }
  if (p != nullptr) {
    scrub_grown_block(p, old_usable);
    trace_alloc(p, n, AllocFn::realloc);
    if (__builtin_expect(linker_caller(caller), 0)) linker_block_insert(p);
  }
  return p;
}

[[gnu::visibility("default")]] void* realloc(void* old, std::size_t n) {
  return traced_realloc(old, n, __builtin_return_address(0));
}

[[gnu::visibility("default")]] void* reallocarray(void* old, std::size_t count, std::size_t size) {
  std::size_t n;
  if (__builtin_mul_overflow(count, size, &n)) {
    errno = ENOMEM;
    return nullptr;
  }
  return traced_realloc(old, n, __builtin_return_address(0));
}

[[gnu::visibility("default")]] int posix_memalign(void** out, std::size_t alignment,
                                                  std::size_t n) {
  if (!valid_alignment(alignment)) return EINVAL;
  void* p = __libc_memalign(alignment, n);
  if (p == nullptr) return ENOMEM;
  after_alloc(p, n, AllocFn::aligned, alignment, __builtin_return_address(0));
  *out = p;
  return 0;
}

[[gnu::visibility("default")]] void* aligned_alloc(std::size_t alignment, std::size_t n) {
  void* p = __libc_memalign(alignment, n);
  after_alloc(p, n, AllocFn::aligned, alignment, __builtin_return_address(0));
  return p;
}

[[gnu::visibility("default")]] void* memalign(std::size_t alignment, std::size_t n) {
  void* p = __libc_memalign(alignment, n);
  after_alloc(p, n, AllocFn::aligned, alignment, __builtin_return_address(0));
  return p;
}

[[gnu::visibility("default")]] void* valloc(std::size_t n) {
  void* p = __libc_valloc(n);
  after_alloc(p, n, AllocFn::aligned, 4096, __builtin_return_address(0));
  return p;
}

[[gnu::visibility("default")]] void* pvalloc(std::size_t n) {
  void* p = __libc_pvalloc(n);
  after_alloc(p, n, AllocFn::aligned, 4096, __builtin_return_address(0));
  return p;
}

}  // extern "C"
