#include "next_allocator.hpp"

#include <dlfcn.h>
#include <errno.h>
#include <gnu/libc-version.h>

#include <atomic>
#include <cstring>

#include "preload_state.hpp"

namespace memtrail::preload {

alignas(64) char g_arena[kArenaBytes];

namespace {

std::atomic<std::size_t> g_arena_used{0};
// 0: not resolved, 1: dlsym running (its own allocations use the arena),
// 2: every pointer of g_next is the next definition.
std::atomic<int> g_state{0};

// Arena blocks: a 16-byte header holding the size, then the block.
constexpr std::size_t kHeader = 16;

void* arena_alloc(std::size_t n, std::size_t alignment) {
  if (alignment < kHeader) alignment = kHeader;
  if (n > kArenaBytes) return nullptr;
  std::size_t used = g_arena_used.load(std::memory_order_relaxed);
  for (;;) {
    std::size_t start = (used + kHeader + alignment - 1) & ~(alignment - 1);
    std::size_t end = start + ((n + kHeader - 1) & ~(kHeader - 1));
    if (end > kArenaBytes) {
      errno = ENOMEM;
      return nullptr;
    }
    if (g_arena_used.compare_exchange_weak(used, end, std::memory_order_relaxed)) {
      std::memcpy(g_arena + start - sizeof(std::size_t), &n, sizeof n);
      return g_arena + start;  // zero: static storage, never reused
    }
  }
}

template <typename Fn>
Fn next(const char* name) {
  return reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
}

// True once g_next holds the next definitions; false while this thread or
// another one resolves them (then the caller serves from the arena).
bool resolved() {
  resolve_next_allocator();
  return g_state.load(std::memory_order_acquire) == 2;
}

void* boot_malloc(std::size_t n) {
  return resolved() ? g_next.malloc(n) : arena_alloc(n, 0);
}
void boot_free(void* p) {
  if (in_bootstrap_arena(p)) return;
  if (resolved()) g_next.free(p);
}
void* boot_calloc(std::size_t count, std::size_t size) {
  if (resolved()) return g_next.calloc(count, size);
  std::size_t n;
  if (__builtin_mul_overflow(count, size, &n)) return nullptr;
  return arena_alloc(n, 0);
}
void* boot_realloc(void* old, std::size_t n) {
  if (in_bootstrap_arena(old)) return realloc_from_arena(old, n);
  if (resolved()) return g_next.realloc(old, n);
  return old == nullptr ? arena_alloc(n, 0) : nullptr;
}
int boot_posix_memalign(void** out, std::size_t alignment, std::size_t n) {
  if (resolved()) return g_next.posix_memalign(out, alignment, n);
  void* p = arena_alloc(n, alignment);
  if (p == nullptr) return ENOMEM;
  *out = p;
  return 0;
}
void* boot_aligned_alloc(std::size_t alignment, std::size_t n) {
  return resolved() ? g_next.aligned_alloc(alignment, n) : arena_alloc(n, alignment);
}
void* boot_memalign(std::size_t alignment, std::size_t n) {
  return resolved() ? g_next.memalign(alignment, n) : arena_alloc(n, alignment);
}
void* boot_valloc(std::size_t n) {
  return resolved() ? g_next.valloc(n) : arena_alloc(n, 4096);
}
void* boot_pvalloc(std::size_t n) {
  return resolved() ? g_next.pvalloc(n) : arena_alloc((n + 4095) & ~std::size_t{4095}, 4096);
}
std::size_t boot_usable_size(void* p) {
  if (in_bootstrap_arena(p)) return arena_block_size(p);
  return resolved() ? g_next.malloc_usable_size(p) : 0;
}

}  // namespace

NextAllocator g_next = {boot_malloc,         boot_free,          boot_calloc,   boot_realloc,
                        boot_posix_memalign, boot_aligned_alloc, boot_memalign, boot_valloc,
                        boot_pvalloc,        boot_usable_size};

std::size_t arena_block_size(const void* p) {
  std::size_t n;
  std::memcpy(&n, static_cast<const char*>(p) - sizeof n, sizeof n);
  return n;
}

void* realloc_from_arena(void* old, std::size_t n) {
  void* p = g_next.malloc(n);  // the arena itself while dlsym still runs
  if (p != nullptr) {
    std::size_t old_size = arena_block_size(old);
    std::memcpy(p, old, old_size < n ? old_size : n);
  }
  return p;
}

void resolve_next_allocator() {
  int expected = 0;
  if (!g_state.compare_exchange_strong(expected, 1, std::memory_order_acq_rel)) return;
  NextAllocator n;
  n.malloc = next<decltype(n.malloc)>("malloc");
  n.free = next<decltype(n.free)>("free");
  n.calloc = next<decltype(n.calloc)>("calloc");
  n.realloc = next<decltype(n.realloc)>("realloc");
  n.posix_memalign = next<decltype(n.posix_memalign)>("posix_memalign");
  n.aligned_alloc = next<decltype(n.aligned_alloc)>("aligned_alloc");
  n.memalign = next<decltype(n.memalign)>("memalign");
  n.valloc = next<decltype(n.valloc)>("valloc");
  n.pvalloc = next<decltype(n.pvalloc)>("pvalloc");
  n.malloc_usable_size = next<decltype(n.malloc_usable_size)>("malloc_usable_size");
  // Every process has glibc behind us; an allocator that lacks one of the
  // functions leaves that name to glibc's, exactly as without us.
  g_next = n;
  g_state.store(2, std::memory_order_release);
}

// By the file that defines the next malloc: tcmalloc and mimalloc also
// define __libc_malloc, so comparing addresses with it would not tell.
bool heap_is_glibc() {
  static const bool glibc = [] {
    resolve_next_allocator();
    Dl_info next{}, libc{};
    if (dladdr(reinterpret_cast<void*>(g_next.malloc), &next) == 0 ||
        dladdr(reinterpret_cast<void*>(&gnu_get_libc_version), &libc) == 0)
      return false;
    return next.dli_fbase == libc.dli_fbase;
  }();
  return glibc;
}

bool next_usable_size_known() {
  static const bool known = [] {
    if (heap_is_glibc()) return true;
    Dl_info m{}, u{};  // defined by the same object as the next malloc?
    if (dladdr(reinterpret_cast<void*>(g_next.malloc), &m) == 0 ||
        dladdr(reinterpret_cast<void*>(g_next.malloc_usable_size), &u) == 0)
      return false;
    return m.dli_fbase == u.dli_fbase;
  }();
  return known;
}

}  // namespace memtrail::preload
