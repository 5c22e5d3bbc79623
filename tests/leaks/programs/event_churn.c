// Not in the leak suite (no expected answer): the program
// own_memory_debug_test reads the tracer's memory on. One thread makes
// ~600,000 events (300,000 malloc/free pairs), enough raw events to fill
// and recycle dozens of event blocks and a writer's chunk of 1 MiB, then
// exits with 2,000 blocks reachable from a global, so the exit scan runs.
#include <stdlib.h>
#include <string.h>

#include "leak_common.h"

enum { kPairs = 300000, kKept = 2000 };

void* g_kept[kKept];

int main(void) {
  for (int i = 0; i < kPairs; ++i) {
    char* p = (char*)malloc(16 + (size_t)(i % 48));
    p[0] = (char)i;
    touch(p);
    free(p);
  }
  for (int i = 0; i < kKept; ++i) {
    g_kept[i] = malloc(32);
    memset(g_kept[i], 1, 32);
  }
  scrub_stack();
  return 0;
}
