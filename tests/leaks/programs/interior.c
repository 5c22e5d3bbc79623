// Expected (Valgrind memcheck): definitely lost 1 block / 100 B; indirectly
// lost 0; possibly lost 1 block / 256 B; still reachable 1 block / 64 B.
// memtrail the same (its "possible" class). LSan: Direct 1 / 100 (LSan
// has no possibly lost: the interior pointer keeps the 256 B block).
// g_middle points 64 bytes into a 256 B block; g_start to a 64 B block;
// g_past_end one past the end of a 100 B block, which is no pointer into it.
#include <stdlib.h>
#include <string.h>

#include "leak_common.h"

char* g_middle;
char* g_start;
char* g_past_end;

__attribute__((noinline)) static void set_up(void) {
  char* big = (char*)malloc(256);
  memset(big, 0, 256);
  g_middle = big + 64;
  g_start = (char*)malloc(64);
  memset(g_start, 0, 64);
  char* lost = (char*)malloc(100);
  memset(lost, 0, 100);
  g_past_end = lost + 100;
  touch(&g_middle);
  touch(&g_past_end);
}

int main(void) {
  set_up();
  scrub_stack();
  return 0;
}
