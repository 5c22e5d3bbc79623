// Expected (Valgrind memcheck): definitely lost 2 blocks / 8,320 B;
// indirectly lost 1 block / 40 B; possibly lost 0; still reachable 1 block /
// 512 B. memtrail: direct 2 / 8320, indirect 1 / 40, reachable 1 / 512.
// LSan: Direct 2 / 8320, Indirect 1 / 40.
// posix_memalign(64, 128) holding the only pointer to a 40 B malloc block,
// and aligned_alloc(4096, 8192), both leaked; aligned_alloc(256, 512) kept
// in a global.
#include <stdlib.h>
#include <string.h>

#include "leak_common.h"

void* g_kept;

__attribute__((noinline)) static void leak_aligned(void) {
  void** holder = NULL;
  if (posix_memalign((void**)&holder, 64, 128) != 0) abort();
  memset(holder, 0, 128);
  holder[0] = malloc(40);
  memset(holder[0], 4, 40);
  touch(holder);
  char* page = (char*)aligned_alloc(4096, 8192);
  memset(page, 5, 8192);
  touch(page);
  holder = NULL;
  touch(&holder);
}

int main(void) {
  leak_aligned();
  g_kept = aligned_alloc(256, 512);
  memset(g_kept, 6, 512);
  touch(&g_kept);
  scrub_stack();
  return 0;
}
