/* dlopen_host: loads dlopen_plugin at run time, calls it, unloads it.
 *
 *   dlopen_host [PLUGIN_PATH]      (default: the plugin in the build tree)
 *
 * The plugin leaks exactly one 4242-byte block, allocated from code that is
 * unloaded by the time the program exits (its module stays in the trace's
 * module table, so the stack still resolves). */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char** argv) {
  const char* path = argc > 1 ? argv[1] : DLOPEN_PLUGIN_PATH;
  void* handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (handle == NULL) {
    fprintf(stderr, "dlopen_host: %s\n", dlerror());
    return 1;
  }
  int (*work)(int) = (int (*)(int))dlsym(handle, "plugin_work");
  void (*shutdown)(void) = (void (*)(void))dlsym(handle, "plugin_shutdown");
  if (work == NULL || shutdown == NULL) {
    fprintf(stderr, "dlopen_host: plugin symbols missing: %s\n", dlerror());
    return 1;
  }
  int result = work(20);
  shutdown();
  if (dlclose(handle) != 0) {
    fprintf(stderr, "dlopen_host: dlclose: %s\n", dlerror());
    return 1;
  }
  printf("dlopen_host: plugin returned %d\n", result);
  return 0;
}
