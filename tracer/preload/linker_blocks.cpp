// The set of heap blocks allocated by ld.so (see linker_blocks.hpp).
#include "linker_blocks.hpp"

#include <dlfcn.h>
#include <link.h>

#include <sys/auxv.h>

#include <algorithm>

namespace memtrail::preload {

LinkerRange g_linker_text;
std::atomic<std::uint32_t> g_linker_block_count{0};

namespace {

// Open addressing, linear probing. 0 = empty, 1 = erased. Sized for a few
// thousand live threads (one DTV each) plus the link maps of a large program;
// beyond that, extra linker blocks are simply not remembered (they would then
// show up as leaks, never as a crash).
constexpr std::size_t kSlots = 1 << 14;
constexpr std::uintptr_t kEmpty = 0;
constexpr std::uintptr_t kErased = 1;
std::atomic<std::uintptr_t> g_slots[kSlots];
std::atomic_flag g_lock = ATOMIC_FLAG_INIT;

std::size_t slot_of(std::uintptr_t p) {
  return (p >> 4) * 0x9e3779b97f4a7c15ull >> 50;
}

struct SpinGuard {
  SpinGuard() {
    while (g_lock.test_and_set(std::memory_order_acquire)) {
    }
  }
  ~SpinGuard() { g_lock.clear(std::memory_order_release); }
};

int find_linker(dl_phdr_info* info, std::size_t, void* data) {
  auto want = reinterpret_cast<std::uintptr_t>(data);
  std::uintptr_t low = ~std::uintptr_t{0}, high = 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const auto& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD) continue;
    low = std::min<std::uintptr_t>(low, info->dlpi_addr + ph.p_vaddr);
    high = std::max<std::uintptr_t>(high, info->dlpi_addr + ph.p_vaddr + ph.p_memsz);
  }
  if (want < low || want >= high) return 0;
  g_linker_text.begin = low;
  g_linker_text.size = high - low;
  return 1;
}

}  // namespace

void init_linker_range() {
  // AT_BASE is where the kernel mapped the program interpreter, ld.so. It is
  // 0 when ld.so was run as a command ("ld.so ./prog"); then ld.so is the
  // module holding _r_debug.
  auto base = static_cast<std::uintptr_t>(getauxval(AT_BASE));
  if (base == 0) base = reinterpret_cast<std::uintptr_t>(dlsym(RTLD_DEFAULT, "_r_debug"));
  if (base != 0) dl_iterate_phdr(find_linker, reinterpret_cast<void*>(base));
}

bool linker_range_known_early() {
  if (g_linker_text.size != 0) return true;
  auto base = static_cast<std::uintptr_t>(getauxval(AT_BASE));
  if (base != 0) dl_iterate_phdr(find_linker, reinterpret_cast<void*>(base));
  return g_linker_text.size != 0;
}

void linker_block_insert(const void* block) {
  auto p = reinterpret_cast<std::uintptr_t>(block);
  SpinGuard guard;
  std::size_t i = slot_of(p);
  for (std::size_t probes = 0; probes < kSlots; ++probes, i = (i + 1) & (kSlots - 1)) {
    std::uintptr_t cur = g_slots[i].load(std::memory_order_relaxed);
    if (cur == p) return;
    if (cur == kEmpty || cur == kErased) {
      g_slots[i].store(p, std::memory_order_release);
      g_linker_block_count.fetch_add(1, std::memory_order_relaxed);
      return;
    }
  }
}

void linker_block_erase_slow(const void* block) {
  auto p = reinterpret_cast<std::uintptr_t>(block);
  if (!linker_block_contains(p)) return;  // the common case: no lock
  SpinGuard guard;
  std::size_t i = slot_of(p);
  for (std::size_t probes = 0; probes < kSlots; ++probes, i = (i + 1) & (kSlots - 1)) {
    std::uintptr_t cur = g_slots[i].load(std::memory_order_relaxed);
    if (cur == kEmpty) return;
    if (cur == p) {
      g_slots[i].store(kErased, std::memory_order_release);
      g_linker_block_count.fetch_sub(1, std::memory_order_relaxed);
      return;
    }
  }
}

bool linker_block_contains(std::uint64_t address) {
  std::size_t i = slot_of(address);
  for (std::size_t probes = 0; probes < kSlots; ++probes, i = (i + 1) & (kSlots - 1)) {
    std::uintptr_t cur = g_slots[i].load(std::memory_order_acquire);
    if (cur == kEmpty) return false;
    if (cur == address) return true;
  }
  return false;
}

}  // namespace memtrail::preload
