// Linked to ctor_libs: its constructor leaks 64 B (direct at exit).
#include <stdlib.h>
#include <string.h>

#include "leak_common.h"

static int g_ran;

__attribute__((constructor)) static void leak_init(void) {
  char* p = (char*)malloc(64);
  memset(p, 2, 64);
  touch(p);
  g_ran = 1;
}

int ctor_leak_ran(void) {
  return g_ran;
}
