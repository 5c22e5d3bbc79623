// A realloc that fails (a size no allocator gives) leaves the old block
// live and untouched; run on counting_allocator (preloaded, no
// malloc_usable_size of its own) the tracer must not ask glibc's
// malloc_usable_size about the block (it reads a foreign header: issue 26,
// brief item 2). Prints what the program sees of the block and its counts.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guest_observables.h"

static void* (*volatile reallocate)(void*, size_t) = realloc;

int main(void) {
  char* block = malloc(100);
  if (block == NULL) return 1;
  strcpy(block, "kept after the failed realloc");
  void* huge = reallocate(block, SIZE_MAX / 2 + 1);
  printf("huge realloc %s; block: %s\n", huge ? "succeeded" : "failed", block);
  free(huge ? huge : block);
  guest_observe();
  return 0;
}
