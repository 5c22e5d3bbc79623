// Expected (Valgrind memcheck): definitely lost 1 block / 262,144 B;
// indirectly lost 0; possibly lost 0; still reachable 0.
// memtrail: direct 1 / 262144. LSan: Direct 1 / 262144.
// To look a library name up, ld.so maps /etc/ld.so.cache and unmaps it when
// the lookup is over, but one of its two pointers to the mapping
// (dl-cache.c's cache_new) keeps the old address. A block glibc maps later
// (128 KiB and more) may land where the cache was: then a word of ld.so's
// data points into the block, an address of a mapping gone since, no
// pointer to the block. Here a dlopen of a missing library maps and unmaps
// the cache, at the top of the highest gap of the address space, and the
// 256 KiB leak glibc then maps at the top of the same gap covers it: memtrail
// read the leak possibly lost in every run (issue 27; the leak-everything
// script hit it through a 128 KiB leak). Valgrind places its client's
// blocks apart from the mappings: definitely lost.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "leak_common.h"

enum { kLeak = 256 * 1024, kRoom = 1024 * 1024, kPage = 4096, kMaxPlugs = 256 };

// Makes a gap of kRoom bytes or more the highest gap that can hold `size`
// bytes: the smaller gaps above it are filled with inaccessible mappings
// (no roots: nothing can be read there). The cache file's mapping then goes
// to the top of that gap, and so does a larger block mapped next.
static void room_on_top(size_t size) {
  char* room = mmap(NULL, kRoom, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (room == MAP_FAILED) return;
  munmap(room, kRoom);
  for (int plugs = 0; plugs < kMaxPlugs; ++plugs) {
    char* plug = mmap(NULL, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (plug == MAP_FAILED) return;
    if (plug >= room && plug < room + kRoom) {  // the room is the highest gap left
      munmap(plug, size);
      return;
    }
  }
}

// In a function of its own: its dead frame, which scrub_stack() clears,
// holds the leak's address (LeakSanitizer scans the dead frames below main).
__attribute__((noinline)) static void leak_over_the_cache(void) {
  struct stat cache;
  if (stat("/etc/ld.so.cache", &cache) == 0)
    room_on_top(((size_t)cache.st_size + kPage - 1) & ~(size_t)(kPage - 1));
  // Not found: ld.so searched its cache for it (mapped and unmapped it).
  if (dlopen("libmemtrail-no-such-library.so.27", RTLD_NOW) != NULL) abort();
  // The error's message, then libc's record of it, freed: nothing of libc's
  // is left reachable (Valgrind frees it at exit with __libc_freeres).
  while (dlerror() != NULL) {
  }
#if defined(__has_feature)
#if __has_feature(leak_sanitizer)
  // LSan maps a large block as glibc does, where the cache was, and scans
  // ld.so's data too: the stale word then made it call the leak reachable
  // (1 run in 5). Its build keeps the cache's place taken instead.
  if (stat("/etc/ld.so.cache", &cache) == 0)
    mmap(NULL, (size_t)cache.st_size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
#endif
#endif
  char* leaked = malloc(kLeak);  // over the mmap threshold: glibc maps it
  leaked[0] = 1;
  touch(leaked);
}

int main(void) {
  leak_over_the_cache();
  scrub_stack();
  return 0;
}
