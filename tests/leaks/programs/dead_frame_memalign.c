// Expected (Valgrind memcheck): definitely lost 1 block / 200 B; indirectly
// lost 0; possibly lost 0; still reachable 0.
// memtrail: direct 1 / 200, indirect 0, reachable 0. LSan: Direct 1 / 200 at
// -O0; at -O2 (clang 14) none, because LSan scans the exiting thread from its
// own stack pointer and main's dead frame still holds `a` (the suite follows
// Valgrind and says so).
// posix_memalign stores the address through &a, so `a` lives in main's stack
// frame at every optimization level; main has returned before the exit scan.
#include <stdlib.h>
#include <string.h>

#include "leak_common.h"

int main(void) {
  void* a = NULL;
  if (posix_memalign(&a, 64, 200) != 0) return 2;
  memset(a, 7, 200);
  touch(a);
  return ((unsigned char*)a)[10] == 7 ? 0 : 1;
}
