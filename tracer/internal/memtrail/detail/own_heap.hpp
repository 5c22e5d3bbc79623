// The tracer's own heap: memory for everything the tracer keeps (the
// writer's buffers and tables, zstd's contexts, libstdc++'s and libunwind's
// allocations made for us) from mappings of its own, never from the
// program's allocator. A program with its own malloc (a bump allocator in
// the executable, a preloaded allocator that counts its calls) then sees
// only its own calls, and glibc's figures (mallinfo2) only the program's
// blocks (issue 26, item 3).
//
// The preload's interposers serve a call from here when the calling thread
// is inside the tracer (t_internal), and free a block here when it lies in
// one of these mappings (own_heap_owns). Size classes of powers of two up
// to 256 KiB from 1 MiB chunks; larger blocks are mappings of their own
// (up to 64 MiB of them kept for reuse when given back).
// One spin lock: the tracer allocates rarely (tables grow, buffers swap).
// Defined in libmemtrail.so, so the process has one.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace memtrail::detail {

void* own_malloc(std::size_t n) noexcept;
void* own_calloc(std::size_t count, std::size_t size) noexcept;
void* own_aligned(std::size_t alignment, std::size_t n) noexcept;
void* own_realloc(void* p, std::size_t n) noexcept;
void own_free(void* p) noexcept;
std::size_t own_usable_size(const void* p) noexcept;
// Exact membership (a table of the chunks); callers test the bounds first.
bool own_heap_contains(const void* p) noexcept;

// fork(): held across it, so the child's copy is consistent.
void own_heap_lock() noexcept;
void own_heap_unlock() noexcept;

// The lowest and one past the highest address of any own mapping so far.
extern std::atomic<std::uintptr_t> g_own_low, g_own_high;

[[gnu::always_inline]] inline bool own_heap_owns(const void* p) noexcept {
  auto a = reinterpret_cast<std::uintptr_t>(p);
  if (__builtin_expect(a - g_own_low.load(std::memory_order_relaxed) <
                           g_own_high.load(std::memory_order_relaxed) -
                               g_own_low.load(std::memory_order_relaxed),
                       0))
    return own_heap_contains(p);
  return false;
}

}  // namespace memtrail::detail
