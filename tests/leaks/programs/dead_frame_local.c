// Expected (Valgrind memcheck): definitely lost 1 block / 123 B; indirectly
// lost 0; possibly lost 0; still reachable 0.
// memtrail: direct 1 / 123, indirect 0, reachable 0. LSan: Direct 1 / 123.
// The only pointer lives in main's frame (a stack slot at -O0, a register at
// -O2); once main has returned that frame is dead and must not be a root.
#include <stdlib.h>
#include <string.h>

#include "leak_common.h"

int main(void) {
  char* p = (char*)malloc(123);
  memset(p, 1, 123);
  touch(p);
  return p[3] == 1 ? 0 : 1;
}
