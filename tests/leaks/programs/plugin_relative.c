// Expected (Valgrind memcheck): definitely lost 1 block / 321 B; indirectly
// lost 0; possibly lost 0; still reachable 0.
// memtrail: direct 1 / 321, indirect 0, reachable 0; its stack names
// plugin_leak_321 (plugin.c), though the module was loaded by a relative path
// and is unloaded at exit. LSan: Direct 1 / 321.
// Run in the directory that holds libleakplugin.so.
#include <dlfcn.h>
#include <stdio.h>

#include "leak_common.h"

int main(void) {
  void* handle = dlopen("./libleakplugin.so", RTLD_NOW);
  if (!handle) {
    fprintf(stderr, "plugin_relative: %s\n", dlerror());
    return 2;
  }
  void (*leak)(void) = (void (*)(void))dlsym(handle, "plugin_leak_321");
  if (!leak) return 3;
  leak();
  int closed = dlclose(handle);
  scrub_stack();
  return closed == 0 ? 0 : 4;
}
