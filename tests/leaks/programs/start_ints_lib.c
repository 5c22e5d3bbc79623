// Linked to start_integers_lib: its constructor, which ld.so runs before a
// preloaded tracer's, computes integers from where the brk heap starts and
// stores one every 8 KiB over that heap's first 16 MiB into this library's
// .bss, as libc's start-up stores the machine's cache sizes into its own
// data (start_integers.c says why that matters).
#include <stdint.h>
#include <unistd.h>

enum {
  kBelow = 1024 * 1024,      // the heap may have begun before this ran
  kSpan = 16 * 1024 * 1024,  // the heap's part main's blocks come from
  kStride = 8 * 1024,        // < the leak's size
  kOffset = 0x808,           // never a block's start
  kCount = (kBelow + kSpan) / kStride,
};

uintptr_t start_ints_table[kCount];

__attribute__((constructor)) static void store_start_integers(void) {
  uintptr_t heap = (uintptr_t)sbrk(0) & ~(uintptr_t)(kStride - 1);
  for (int i = 0; i < kCount; ++i)
    start_ints_table[i] = heap - kBelow + (uintptr_t)i * kStride + kOffset;
}

int start_ints_ready(void) {
  return start_ints_table[0] != 0;
}
