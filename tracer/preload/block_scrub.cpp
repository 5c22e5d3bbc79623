// Zeroing new heap blocks for an exact leak scan (block_scrub.hpp).
#include "block_scrub.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

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
// MEMTRAIL_SCRUB=N: only the first N bytes of a block (ASan's
// max_malloc_fill_size); stale addresses beyond them still count.
std::size_t g_scrub_limit = ~std::size_t{0};

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
    char message[160];
    int n = std::snprintf(
        message, sizeof message,
        "memtrail: MEMTRAIL_SCRUB=%.64s is not alloc, 0 or a byte count; using alloc\n", value);
    if (n > 0) (void)!write(2, message, std::min<std::size_t>(n, sizeof message - 1));
    g_scrub_on = true;
  }
  // The mmapped bit is glibc's: trust it only when the malloc we forward to
  // is glibc's (tcmalloc and mimalloc define __libc_malloc too).
  g_glibc_malloc = heap_is_glibc();
}

void scrub_block_from(void* p, std::size_t from) {
  if (g_glibc_malloc && (static_cast<const std::size_t*>(p)[-1] & kIsMmapped) != 0) return;
  std::size_t usable = std::min(g_next.malloc_usable_size(p), g_scrub_limit);
  if (usable > from) std::memset(static_cast<char*>(p) + from, 0, usable - from);
}

}  // namespace memtrail::preload
