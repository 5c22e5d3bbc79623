// Leaks 7 bytes per call; loaded and unloaded in a loop by plugin_loop.
#include <stdlib.h>
#include <string.h>

void* leak7(void) {
  void* p = malloc(7);
  memset(p, 7, 7);
  return p;
}
