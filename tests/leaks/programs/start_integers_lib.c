// Expected (memtrail): direct 1 / 9000, nothing else (start_values_run_test).
// Built without PIE, linked to libstartints.so, whose constructor stored
// integers every 8 KiB over the brk heap into that library's .bss before
// the tracer started: one of them lies inside the 9,000-byte leak main
// makes, and still holds the value it held then, so it cannot point at the
// leak (docs/tracing.md, "A module's constants are no pointers").
#include <stdlib.h>

#include "leak_common.h"

int start_ints_ready(void);

__attribute__((noinline)) static void leak(void) {
  char* block = malloc(9000);
  block[0] = 1;
  touch(block);
}

int main(void) {
  if (!start_ints_ready()) return 1;
  leak();
  scrub_stack();
  return 0;
}
