// Heap blocks owned by the dynamic linker (ld.so): thread DTVs and dynamic
// TLS blocks, link maps, search paths. LeakSanitizer ignores these for the
// same reason we treat them as reachable roots: glibc keeps a DTV for every
// exited thread whose stack it caches, pointed to only from that cached
// stack, which no root scan can see.
//
// malloc and free ask linker_caller() (two compares on the return address);
// only blocks ld.so allocates enter the set, so it stays small. Lookups are
// lock-free; inserts and removals take a spinlock.
#pragma once

#include <atomic>
#include <cstdint>

namespace memtrail::preload {

struct LinkerRange {
  std::uintptr_t begin = 0;
  std::uintptr_t size = 0;  // 0 until initialised
};
extern LinkerRange g_linker_text;
extern std::atomic<std::uint32_t> g_linker_block_count;

// Finds ld.so's mapped range. Called once from the constructor.
void init_linker_range();
// Before the constructor: finds it by AT_BASE only (no dlsym: it allocates);
// false when it is not known.
bool linker_range_known_early();

inline bool linker_caller(const void* return_address) {
  return reinterpret_cast<std::uintptr_t>(return_address) - g_linker_text.begin <
         g_linker_text.size;
}

void linker_block_insert(const void* block);
void linker_block_erase_slow(const void* block);
bool linker_block_contains(std::uint64_t address);

// Called on every free: costs one load while the set is empty.
inline void linker_block_erase(const void* block) {
  if (g_linker_block_count.load(std::memory_order_relaxed) != 0) linker_block_erase_slow(block);
}

}  // namespace memtrail::preload
