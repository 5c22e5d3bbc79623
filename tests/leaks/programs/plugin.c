// The plugin of plugin_relative and plugin_loop: each function leaks one
// block from code that is unloaded before the program exits.
#include <stdlib.h>
#include <string.h>

#include "leak_common.h"

void plugin_leak_321(void) {
  char* p = (char*)malloc(321);
  memset(p, 9, 321);
  touch(p);
}

void plugin_leak_7(void) {
  char* p = (char*)malloc(7);
  memset(p, 7, 7);
  touch(p);
}
