// Expected (Valgrind memcheck): definitely lost 2 blocks / 5,017 B;
// indirectly lost 0; possibly lost 0; still reachable 1 block / 3,000 B.
// memtrail: direct 2 / 5017, indirect 0, reachable 1 / 3000.
// LSan: Direct 2 / 5017.
// A chain grown 10 -> 5000 B in eight reallocs (most of them move) is
// leaked, one shrunk 4000 -> 17 B is leaked, one grown to 3000 B is kept in
// a global. Only each chain's last block is live at exit.
#include <stdlib.h>
#include <string.h>

#include "leak_common.h"

char* g_kept;

__attribute__((noinline)) static char* grow(size_t from, const size_t* sizes, int n) {
  char* p = (char*)malloc(from);
  memset(p, 1, from);
  for (int i = 0; i < n; ++i) {
    p = (char*)realloc(p, sizes[i]);
    p[sizes[i] - 1] = 2;
  }
  return p;
}

__attribute__((noinline)) static void leak_chains(void) {
  static const size_t up[] = {20, 40, 100, 300, 700, 1500, 3000, 5000};
  static const size_t down[] = {1000, 200, 17};
  touch(grow(10, up, 8));
  touch(grow(4000, down, 3));
}

int main(void) {
  static const size_t kept[] = {64, 1024, 3000};
  leak_chains();
  g_kept = grow(8, kept, 3);
  touch(&g_kept);
  scrub_stack();
  return 0;
}
