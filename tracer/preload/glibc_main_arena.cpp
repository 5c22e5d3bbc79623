// Finding glibc's main arena (glibc_main_arena.hpp).
#include "glibc_main_arena.hpp"

#include <gnu/libc-version.h>
#include <link.h>

#include <cstdint>

namespace memtrail::preload {
namespace {

// struct malloc_state, glibc 2.27+ on 64-bit: mutex, flags,
// have_fastchunks (16 bytes with padding), fastbinsY[10], top,
// last_remainder, bins[254], binmap[4] (4-byte), then next, next_free,
// attached_threads, system_mem, max_system_mem.
constexpr std::uintptr_t kNextOffset = 16 + 10 * 8 + 8 + 8 + 254 * 8 + 4 * 4;
constexpr std::uintptr_t kArenaSize = kNextOffset + 5 * 8;
static_assert(kNextOffset == 2160 && kArenaSize == 2200);

MemoryRange g_arena;

struct Search {
  std::uintptr_t libc_code = 0;  // an address inside libc, to know its module
  MemoryRange found;
  int matches = 0;
};

bool holds(const dl_phdr_info* info, std::uintptr_t address) {
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const auto& ph = info->dlpi_phdr[i];
    std::uintptr_t begin = info->dlpi_addr + ph.p_vaddr;
    if (ph.p_type == PT_LOAD && address >= begin && address < begin + ph.p_memsz) return true;
  }
  return false;
}

// main_arena's initialiser in libc's writable segment [begin, end).
void search_segment(std::uintptr_t begin, std::uintptr_t end, Search* s) {
  begin = (begin + 7) & ~std::uintptr_t{7};
  for (std::uintptr_t at = begin + kNextOffset; at + 3 * 8 <= end; at += 8) {
    const auto* words = reinterpret_cast<const std::uintptr_t*>(at);
    const std::uintptr_t arena = at - kNextOffset;
    if (words[0] != arena || words[1] != 0 || words[2] != 1) continue;
    s->found = {arena, arena + kArenaSize};
    ++s->matches;
  }
}

int search_module(dl_phdr_info* info, size_t, void* data) {
  auto* s = static_cast<Search*>(data);
  if (!holds(info, s->libc_code)) return 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const auto& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD || (ph.p_flags & PF_W) == 0) continue;
    std::uintptr_t begin = info->dlpi_addr + ph.p_vaddr;
    search_segment(begin, begin + ph.p_memsz, s);
  }
  return 1;
}

}  // namespace

void find_glibc_main_arena() {
  Search s;
  s.libc_code = reinterpret_cast<std::uintptr_t>(&gnu_get_libc_version);
  dl_iterate_phdr(search_module, &s);
  g_arena = s.matches == 1 ? s.found : MemoryRange{};  // ambiguous: not sure, keep all
}

MemoryRange glibc_main_arena() {
  return g_arena;
}

}  // namespace memtrail::preload
