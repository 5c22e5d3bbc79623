// The program's anonymous read-write mappings (program_mappings.hpp).
#include "program_mappings.hpp"

#include <sys/mman.h>

#include <atomic>
#include <cstdint>

#include "memtrail/detail/reentrancy.hpp"

namespace memtrail::preload {
namespace {

// CPython maps a 1 MiB arena per 1 MiB of small objects (3.10+; 256 KiB
// before): 4096 mappings cover 4 GiB of them.
constexpr int kSlots = 4096;
MemoryRange g_ranges[kSlots];
int g_count = 0;
std::atomic_flag g_lock = ATOMIC_FLAG_INIT;

struct SpinGuard {
  SpinGuard() {
    while (g_lock.test_and_set(std::memory_order_acquire)) {
    }
  }
  ~SpinGuard() { g_lock.clear(std::memory_order_release); }
};

void add_locked(std::uintptr_t begin, std::uintptr_t end) {
  if (g_count < kSlots) g_ranges[g_count++] = {begin, end};
}

// Cuts [begin, end) out of every range (a munmap may cover part of one).
void remove_locked(std::uintptr_t begin, std::uintptr_t end) {
  for (int i = 0; i < g_count;) {
    MemoryRange r = g_ranges[i];
    if (end <= r.begin || begin >= r.end) {
      ++i;
      continue;
    }
    g_ranges[i] = g_ranges[--g_count];  // removed; what is left goes back
    if (r.begin < begin) add_locked(r.begin, begin);
    if (end < r.end) add_locked(end, r.end);
  }
}

bool contains_locked(std::uintptr_t begin, std::uintptr_t end) {
  for (int i = 0; i < g_count; ++i)
    if (g_ranges[i].begin <= begin && end <= g_ranges[i].end) return true;
  return false;
}

std::uintptr_t address_of(const void* p) {
  return reinterpret_cast<std::uintptr_t>(p);
}

}  // namespace

void program_mapped(const void* address, std::size_t length, int prot, int flags) {
  if (detail::thread_is_internal()) return;  // the tracer's own
  if ((flags & MAP_ANONYMOUS) == 0 || (prot & PROT_WRITE) == 0 || length == 0) return;
  SpinGuard guard;
  // MAP_FIXED over an old mapping replaces it.
  remove_locked(address_of(address), address_of(address) + length);
  add_locked(address_of(address), address_of(address) + length);
}

void program_unmapped(const void* address, std::size_t length) {
  SpinGuard guard;
  remove_locked(address_of(address), address_of(address) + length);
}

void program_remapped(const void* old, std::size_t old_size, const void* now,
                      std::size_t new_size) {
  SpinGuard guard;
  const bool ours = contains_locked(address_of(old), address_of(old) + old_size);
  remove_locked(address_of(old), address_of(old) + old_size);
  if (ours) {
    remove_locked(address_of(now), address_of(now) + new_size);
    add_locked(address_of(now), address_of(now) + new_size);
  }
}

std::vector<MemoryRange> program_mappings() {
  SpinGuard guard;
  return std::vector<MemoryRange>(g_ranges, g_ranges + g_count);
}

}  // namespace memtrail::preload
