// The C++ operator new / delete family (plain, array, nothrow, aligned,
// sized), so C++ allocations are labelled op_new / op_new_array and their
// frees op_delete / op_delete_array in the trace. Defining them here replaces
// libstdc++'s for the whole process, the standard way to replace them.
#include <cstddef>
#include <new>

#include "block_scrub.hpp"
#include "early_events.hpp"
#include "linker_blocks.hpp"
#include "next_allocator.hpp"
#include "preload_state.hpp"
#include "program_entry.hpp"
#include "tracer_heap.hpp"

using memtrail::AllocFn;
using namespace memtrail::preload;

namespace {

// [new.delete.single]: loop on the new_handler, throw bad_alloc if none.
// The memory comes from the next malloc (next_allocator.hpp), so a program
// on jemalloc / tcmalloc / mimalloc keeps its allocator for `new` too.
[[gnu::always_inline]] inline void* allocate(std::size_t n, std::size_t alignment) {
  for (;;) {
    void* p;
    if (tracer_is_calling())  // the tracer's own heap (tracer_heap.hpp)
      p = alignment == 0 ? memtrail::detail::own_malloc(n)
                         : memtrail::detail::own_aligned(alignment, n);
    else
      p = real_allocator(
          [=] { return alignment == 0 ? g_next.malloc(n) : g_next.memalign(alignment, n); });
    if (__builtin_expect(p != nullptr, 1)) return p;
    std::new_handler handler = std::get_new_handler();
    if (handler == nullptr) throw std::bad_alloc();
    handler();
  }
}

[[gnu::always_inline]] inline void* allocate_nothrow(std::size_t n,
                                                     std::size_t alignment) noexcept {
  try {
    return allocate(n, alignment);
  } catch (...) {
    return nullptr;
  }
}

[[gnu::always_inline]] inline void traced_new(void* p, std::size_t n, AllocFn fn,
                                              std::size_t alignment) {
  if (tracer_is_calling()) return;  // an own-heap block: not the program's
  if (__builtin_expect(memtrail::tracing(), 0) && p != nullptr) {
    scrub_new_block(p, n, fn);
    trace_alloc(p, n, fn, alignment);
  } else if (__builtin_expect(early_open(), 0) && p != nullptr) {
    early_alloc(p, n, fn, alignment, nullptr);
  }
}

[[gnu::always_inline]] inline void traced_delete(void* p, std::size_t size, AllocFn fn) noexcept {
  if (p == nullptr) return;
  if (memtrail::detail::own_heap_owns(p)) return memtrail::detail::own_free(p);
  if (__builtin_expect(memtrail::tracing(), 0)) {
    if (!trace_free(p, size, fn)) remember_late_free(p);
    linker_block_erase(p);
  } else if (__builtin_expect(early_open(), 0)) {
    early_free(p, size, fn);
  }
  next_free(p);
}

constexpr AllocFn kNew = AllocFn::op_new;
constexpr AllocFn kNewArray = AllocFn::op_new_array;
constexpr AllocFn kDelete = AllocFn::op_delete;
constexpr AllocFn kDeleteArray = AllocFn::op_delete_array;

std::size_t align_of(std::align_val_t a) {
  return static_cast<std::size_t>(a);
}

}  // namespace

#define MEMTRAIL_EXPORT MEMTRAIL_PROGRAM_ENTRY

// The new expression's own frame is skipped by trace_alloc (skip_frames = 1),
// so each of these must record from its own body, not from a shared helper
// that is not inlined.
MEMTRAIL_EXPORT void* operator new(std::size_t n) {
  void* p = allocate(n, 0);
  traced_new(p, n, kNew, 0);
  return p;
}
MEMTRAIL_EXPORT void* operator new[](std::size_t n) {
  void* p = allocate(n, 0);
  traced_new(p, n, kNewArray, 0);
  return p;
}
MEMTRAIL_EXPORT void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  void* p = allocate_nothrow(n, 0);
  traced_new(p, n, kNew, 0);
  return p;
}
MEMTRAIL_EXPORT void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
  void* p = allocate_nothrow(n, 0);
  traced_new(p, n, kNewArray, 0);
  return p;
}
MEMTRAIL_EXPORT void* operator new(std::size_t n, std::align_val_t a) {
  void* p = allocate(n, align_of(a));
  traced_new(p, n, kNew, align_of(a));
  return p;
}
MEMTRAIL_EXPORT void* operator new[](std::size_t n, std::align_val_t a) {
  void* p = allocate(n, align_of(a));
  traced_new(p, n, kNewArray, align_of(a));
  return p;
}
MEMTRAIL_EXPORT void* operator new(std::size_t n, std::align_val_t a,
                                   const std::nothrow_t&) noexcept {
  void* p = allocate_nothrow(n, align_of(a));
  traced_new(p, n, kNew, align_of(a));
  return p;
}
MEMTRAIL_EXPORT void* operator new[](std::size_t n, std::align_val_t a,
                                     const std::nothrow_t&) noexcept {
  void* p = allocate_nothrow(n, align_of(a));
  traced_new(p, n, kNewArray, align_of(a));
  return p;
}

MEMTRAIL_EXPORT void operator delete(void* p) noexcept {
  traced_delete(p, 0, kDelete);
}
MEMTRAIL_EXPORT void operator delete[](void* p) noexcept {
  traced_delete(p, 0, kDeleteArray);
}
MEMTRAIL_EXPORT void operator delete(void* p, std::size_t n) noexcept {
  traced_delete(p, n, kDelete);
}
MEMTRAIL_EXPORT void operator delete[](void* p, std::size_t n) noexcept {
  traced_delete(p, n, kDeleteArray);
}
MEMTRAIL_EXPORT void operator delete(void* p, std::align_val_t) noexcept {
  traced_delete(p, 0, kDelete);
}
MEMTRAIL_EXPORT void operator delete[](void* p, std::align_val_t) noexcept {
  traced_delete(p, 0, kDeleteArray);
}
MEMTRAIL_EXPORT void operator delete(void* p, std::size_t n, std::align_val_t) noexcept {
  traced_delete(p, n, kDelete);
}
MEMTRAIL_EXPORT void operator delete[](void* p, std::size_t n, std::align_val_t) noexcept {
  traced_delete(p, n, kDeleteArray);
}
MEMTRAIL_EXPORT void operator delete(void* p, const std::nothrow_t&) noexcept {
  traced_delete(p, 0, kDelete);
}
MEMTRAIL_EXPORT void operator delete[](void* p, const std::nothrow_t&) noexcept {
  traced_delete(p, 0, kDeleteArray);
}
MEMTRAIL_EXPORT void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  traced_delete(p, 0, kDelete);
}
MEMTRAIL_EXPORT void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  traced_delete(p, 0, kDeleteArray);
}
