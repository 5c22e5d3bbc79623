/* dlopen_plugin: a library the dlopen sample loads at run time. It allocates
 * (one block kept in its own data, reachable while loaded) and leaks one
 * 4242-byte block. */
#include <stdlib.h>
#include <string.h>

static char* plugin_state; /* 128 bytes, freed by plugin_shutdown */

__attribute__((noinline)) static void plugin_leak(void) {
  char* lost = malloc(4242);
  memset(lost, 7, 4242);
  __asm__ volatile("" : : "r"(lost) : "memory");
}

int plugin_work(int x) {
  plugin_state = malloc(128);
  memset(plugin_state, 1, 128);
  plugin_leak();
  return x * 2 + 1;
}

void plugin_shutdown(void) {
  free(plugin_state);
  plugin_state = NULL;
}
