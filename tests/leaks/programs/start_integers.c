// Expected (Valgrind memcheck): definitely lost 0; indirectly lost 0;
// possibly lost 1 block / 9,000 B; still reachable 0.
// memtrail: direct 1 / 9000 (it departs from Valgrind here, see below).
// LSan: Direct 1 / 9000.
// Built without PIE (CMakeLists.txt): the program lies at 0x400000 and its
// brk heap a random distance above its .bss, so malloc's blocks have small
// addresses, the values of integers. Start-up code computes integers too:
// glibc's cache sizes (__x86_shared_cache_size and its kin, set before main
// from CPUID) once covered a 100,000-byte leak and made it possibly lost.
// Here a preinit_array entry, which runs before every library constructor
// (a preloaded tracer's too), computes such integers from where the brk heap
// starts and stores one every 8 KiB over that heap's first 16 MiB, into
// .bss: they are not the file's values, so the link-time-constant rule
// (image_constant.cpp) does not see them, and the 9,000-byte leak main
// makes covers at least one. A word still holding the value it held when
// the tracer started cannot point at a block allocated since: memtrail
// says definitely lost, as LSan does (its heap lies far above). Valgrind's
// heap lies among the integers too: it scans the word and calls the leak
// possibly lost (docs/tracing.md, "Kept where memtrail is righter than
// Valgrind").
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "leak_common.h"

enum {
  kBelow = 1024 * 1024,      // the heap may have begun before the entry ran
  kSpan = 16 * 1024 * 1024,  // the heap's part main's blocks come from
  kStride = 8 * 1024,        // < the leak's size
  kOffset = 0x808,           // never a block's start
  kCount = (kBelow + kSpan) / kStride,
};

// Writable, not initialised from the file: .bss, a root.
static uintptr_t g_integers[kCount];

static void store_start_integers(int argc, char** argv, char** envp) {
  (void)argc, (void)argv, (void)envp;
  uintptr_t heap = (uintptr_t)sbrk(0) & ~(uintptr_t)(kStride - 1);
  for (int i = 0; i < kCount; ++i) g_integers[i] = heap - kBelow + (uintptr_t)i * kStride + kOffset;
}

__attribute__((section(".preinit_array"),
               used)) static void (*const g_preinit)(int, char**, char**) = store_start_integers;

__attribute__((noinline)) static void leak(void) {
  char* block = malloc(9000);
  block[0] = 1;
  touch(block);
}

int main(void) {
  touch(g_integers);
  leak();
  scrub_stack();
  return 0;
}
