// Expected (Valgrind memcheck): definitely lost 1 block / 2,000 B;
// indirectly lost 0; possibly lost 0; still reachable 0.
// memtrail: direct 1 / 2000. LSan: Direct 1 / 2000.
// glibc malloc's main arena remembers the chunk the last small request split
// off (its last_remainder) and never forgets it: here that chunk merges back
// into the 2000 B block it came from, which is then allocated again and
// leaked, so the arena (in libc's .data) points into the leak's middle. In a
// threaded program which block covers that stale address depends on which
// thread split last: memtrail read a definite leak "possibly lost" in about
// 1 run of 100 (tests/preload/recycled_heap.cpp); here in every run.
#include <stdlib.h>

#include "leak_common.h"

// In a function of its own: its dead frame, which scrub_stack() clears,
// holds the leak's address (LeakSanitizer scans the dead frames below main).
__attribute__((noinline)) static void leak_over_stale_remainder(void) {
  void* fill[7];  // 7 freed blocks of b's size fill the thread's tcache bin
  for (int i = 0; i < 7; ++i) touch(fill[i] = malloc(200));
  char* a = malloc(2000);    // too big for the tcache: freed into the arena
  void* guard = malloc(16);  // keeps `a` from merging into the top chunk
  touch(a);
  touch(guard);
  free(a);
  char* b = malloc(200);  // split off `a`: last_remainder = the rest of `a`
  touch(b);
  for (int i = 0; i < 7; ++i) free(fill[i]);
  free(b);                      // the tcache bin is full: `b` merges with the rest into `a` again
  char* leaked = malloc(2000);  // `a`, the old remainder's header inside it
  leaked[0] = 1;
  touch(leaked);
  free(guard);
}

int main(void) {
  leak_over_stale_remainder();
  scrub_stack();
  return 0;
}
