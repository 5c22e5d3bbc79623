// plugin_loop PLUGIN [ROUNDS=1000]: dlopen the plugin, call leak7() (which
// leaks 7 bytes), drop the pointer, dlclose; ROUNDS times. Valgrind and LSan:
// ROUNDS direct leaks of 7 bytes, nothing indirect.
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: plugin_loop PLUGIN [ROUNDS]\n");
    return 2;
  }
  int rounds = argc > 2 ? atoi(argv[2]) : 1000;
  for (int i = 0; i < rounds; ++i) {
    void* handle = dlopen(argv[1], RTLD_NOW);
    if (handle == NULL) {
      fprintf(stderr, "plugin_loop: %s\n", dlerror());
      return 1;
    }
    void* (*leak7)(void) = (void* (*)(void))dlsym(handle, "leak7");
    if (leak7 == NULL || leak7() == NULL) return 1;
    dlclose(handle);
  }
  return 0;
}
