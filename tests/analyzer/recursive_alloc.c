/* A recursive allocator for the caller/callee tests: main calls
 * descend(4), which allocates 100 bytes on each of its 5 levels and, at the
 * deepest, calls leaf_alloc for 1000 bytes. Built at -O0 so that neither
 * the recursion nor the calls are folded away: the stacks are main;descend
 * x1..5 (;leaf_alloc). Everything is freed before exit. */
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))

static void* kept[6];
static int kept_count;

NOINLINE void* leaf_alloc(size_t n) {
  return malloc(n);
}

NOINLINE void descend(int depth) {
  kept[kept_count++] = malloc(100);
  if (depth > 0)
    descend(depth - 1);
  else
    kept[kept_count++] = leaf_alloc(1000);
}

int main(void) {
  descend(4);
  for (int i = 0; i < kept_count; ++i) free(kept[i]);
  return kept_count == 6 ? 0 : 1;
}
