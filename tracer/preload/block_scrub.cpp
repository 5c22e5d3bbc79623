// Filling new heap blocks for an exact leak scan (block_scrub.hpp).
#include "block_scrub.hpp"

#include <dlfcn.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "memtrail/detail/diagnostics.hpp"
#include "memtrail/detail/environment.hpp"
#include "next_allocator.hpp"
#include "preload_state.hpp"

namespace memtrail::preload {

bool g_scrub_on = true;

namespace {

// glibc's chunk header: the size word just before the block; its bit 1
// (IS_MMAPPED) marks a chunk mmapped on its own.
constexpr std::size_t kIsMmapped = 2;
bool g_glibc_malloc = true;
// The next allocator answers malloc_usable_size for its own blocks.
bool g_usable_size_known = true;
// MEMTRAIL_SCRUB=N: only the first N bytes of a block (ASan's
// max_malloc_fill_size); stale addresses beyond them still count.
std::size_t g_scrub_limit = ~std::size_t{0};
// What a fresh block holds without us: 0, or glibc's perturb byte ^ 0xff.
unsigned char g_fill = 0;
// Blocks from this size on are filled page by page, resident pages only.
constexpr std::size_t kResidencyCheckBytes = 64 * 1024;
constexpr std::uintptr_t kPage = 4096;

// glibc's perturb byte: GLIBC_TUNABLES' glibc.malloc.perturb, else
// MALLOC_PERTURB_ (glibc reads both at start-up; the tunable wins).
int perturb_byte() {
  int value = 0;
  if (const char* env = std::getenv("MALLOC_PERTURB_")) value = std::atoi(env);
  if (const char* tunables = std::getenv("GLIBC_TUNABLES")) {
    const char* key = std::strstr(tunables, "glibc.malloc.perturb=");
    if (key != nullptr) value = std::atoi(key + std::strlen("glibc.malloc.perturb="));
  }
  return value & 0xff;
}

// Fills [begin, end), skipping whole pages that are not resident: they are
// zero pages the kernel has not handed out yet (or swapped out: their stale
// bytes then stay, the scan's only blind spot), and writing them would make
// them resident.
void fill_resident(unsigned char* begin, unsigned char* end) {
  auto first_page = reinterpret_cast<std::uintptr_t>(begin) & ~(kPage - 1);
  auto last = reinterpret_cast<std::uintptr_t>(end);
  constexpr std::size_t kBatch = 256;  // pages per mincore call
  unsigned char resident[kBatch];
  for (std::uintptr_t page = first_page; page < last; page += kBatch * kPage) {
    std::size_t pages = std::min<std::size_t>(kBatch, (last - page + kPage - 1) / kPage);
    bool known = mincore(reinterpret_cast<void*>(page), pages * kPage, resident) == 0;
    for (std::size_t i = 0; i < pages; ++i) {
      if (known && (resident[i] & 1) == 0 && g_fill == 0) continue;
      auto from = std::max(page + i * kPage, reinterpret_cast<std::uintptr_t>(begin));
      auto to = std::min(page + (i + 1) * kPage, last);
      std::memset(reinterpret_cast<void*>(from), g_fill, to - from);
    }
  }
}

}  // namespace

void init_block_scrub() {
  detail::add_known_environment_variable("MEMTRAIL_SCRUB");
  const char* value = std::getenv("MEMTRAIL_SCRUB");
  if (value == nullptr || std::strcmp(value, "alloc") == 0) {
    g_scrub_on = true;
  } else if (std::strcmp(value, "0") == 0 || std::strcmp(value, "off") == 0) {
    g_scrub_on = false;
  } else if (char* end = nullptr; std::strtoull(value, &end, 10) > 0 && *end == '\0') {
    g_scrub_on = true;
    g_scrub_limit = std::strtoull(value, nullptr, 10);
  } else {
    detail::diagnostic(
        "memtrail: MEMTRAIL_SCRUB=%.64s is not alloc, 0 or a byte count; using alloc\n", value);
    g_scrub_on = true;
  }
  // The mmapped bit and the perturb byte are glibc's: trust them only when
  // the malloc we forward to is glibc's (tcmalloc and mimalloc define
  // __libc_malloc too).
  g_glibc_malloc = heap_is_glibc();
  g_usable_size_known = next_usable_size_known();
  int perturb = g_glibc_malloc ? perturb_byte() : 0;
  g_fill = perturb != 0 ? static_cast<unsigned char>(perturb ^ 0xff) : 0;
}

void scrub_block_from(void* p, std::size_t from, std::size_t requested) {
  if (g_glibc_malloc && (static_cast<const std::size_t*>(p)[-1] & kIsMmapped) != 0) return;
  std::size_t size = g_usable_size_known ? g_next.malloc_usable_size(p) : requested;
  size = std::min(size, g_scrub_limit);
  if (size <= from) return;
  auto* begin = static_cast<unsigned char*>(p) + from;
  if (size - from < kResidencyCheckBytes)
    std::memset(begin, g_fill, size - from);
  else
    fill_resident(begin, static_cast<unsigned char*>(p) + size);
}

std::size_t scrub_old_usable(void* old) {
  if (!g_scrub_on || old == nullptr) return 0;
  return g_usable_size_known ? g_next.malloc_usable_size(old) : ~std::size_t{0};
}

}  // namespace memtrail::preload
