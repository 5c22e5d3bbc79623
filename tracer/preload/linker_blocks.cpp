// The set of heap blocks allocated by ld.so (see linker_blocks.hpp).
#include "linker_blocks.hpp"

#include <dlfcn.h>
#include <link.h>

#include <sys/auxv.h>

#include <algorithm>

#include "memtrail/detail/address_set.hpp"

namespace memtrail::preload {

LinkerRange g_linker_text;
std::atomic<std::uint32_t> g_linker_block_count{0};

namespace {

// Sized for a few thousand live threads (one DTV each) plus the link maps
// of a large program; beyond that, extra linker blocks are simply not
// remembered (they would then show up as leaks, never as a crash).
detail::AddressSet<1 << 14> g_blocks;

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
  g_blocks.insert(reinterpret_cast<std::uintptr_t>(block));
  g_linker_block_count.store(g_blocks.size(), std::memory_order_relaxed);
}

void linker_block_erase_slow(const void* block) {
  if (g_blocks.take(reinterpret_cast<std::uintptr_t>(block)))
    g_linker_block_count.store(g_blocks.size(), std::memory_order_relaxed);
}

bool linker_block_contains(std::uint64_t address) {
  return g_blocks.contains(address);
}

}  // namespace memtrail::preload
