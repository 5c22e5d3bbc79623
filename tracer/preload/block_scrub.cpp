// Zeroing new heap blocks for an exact leak scan (block_scrub.hpp).
#include "block_scrub.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "memtrail/detail/recorder_internal.hpp"

namespace memtrail::preload {

bool g_scrub_on = true;

namespace {

// glibc's chunk header: the size word just before the block; its bit 1
// (IS_MMAPPED) marks a chunk mmapped on its own.
constexpr std::size_t kIsMmapped = 2;
bool g_glibc_malloc = true;

bool same_module(const void* a, const void* b) {
  Dl_info ia, ib;
  return a != nullptr && b != nullptr && dladdr(a, &ia) != 0 && dladdr(b, &ib) != 0 &&
         ia.dli_fbase == ib.dli_fbase;
}

}  // namespace

void init_block_scrub() {
  detail::add_known_environment_variable("MEMTRAIL_SCRUB");
  const char* value = std::getenv("MEMTRAIL_SCRUB");
  if (value == nullptr || std::strcmp(value, "alloc") == 0) {
    g_scrub_on = true;
  } else if (std::strcmp(value, "0") == 0 || std::strcmp(value, "off") == 0) {
    g_scrub_on = false;
  } else {
    static const char kMessage[] = "memtrail: MEMTRAIL_SCRUB must be alloc or 0; using alloc\n";
    (void)!write(2, kMessage, sizeof kMessage - 1);
    g_scrub_on = true;
  }
  // The mmapped bit is glibc's: trust it only when the malloc we forward to
  // lives where glibc's __libc_malloc does.
  g_glibc_malloc = same_module(dlsym(RTLD_NEXT, "malloc"), dlsym(RTLD_NEXT, "__libc_malloc"));
}

void scrub_block_from(void* p, std::size_t from) {
  if (g_glibc_malloc && (static_cast<const std::size_t*>(p)[-1] & kIsMmapped) != 0) return;
  std::size_t usable = malloc_usable_size(p);
  if (usable > from) std::memset(static_cast<char*>(p) + from, 0, usable - from);
}

}  // namespace memtrail::preload
