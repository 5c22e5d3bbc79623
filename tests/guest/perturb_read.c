// Reads the first and last byte of fresh blocks of a few sizes and prints
// them: under MALLOC_PERTURB_=165 glibc fills new blocks with 0x5a, and the
// tracer's scrub must not change what the program reads (issue 26, item 6).
#include <stdio.h>
#include <stdlib.h>

#include "guest_observables.h"

static void* volatile keep[8];

int main(void) {
  const size_t sizes[] = {24, 200, 5000, 100000, 300000};
  for (int i = 0; i < 5; ++i) {
    // volatile: reading fresh bytes is the point (no -Wuninitialized).
    volatile unsigned char* p = malloc(sizes[i]);
    keep[i] = (void*)p;
    printf("%zu: %02x %02x\n", sizes[i], p[0], p[sizes[i] - 1]);
  }
  guest_observe();
  return 0;
}
