/* Loads its plugin by bare name, found only through this executable's own
 * RUNPATH: dlopen under the preload tracer must still search the caller's
 * RUNPATH (glibc takes it from dlopen's return address). */
#include <dlfcn.h>
#include <stdio.h>

int main(void) {
  void* handle = dlopen("libmemtrail_runpath_plugin.so", RTLD_NOW);
  if (handle == NULL) {
    printf("dlopen failed: %s\n", dlerror());
    return 1;
  }
  int (*answer)(void) = (int (*)(void))dlsym(handle, "runpath_answer");
  printf("runpath plugin says %d\n", answer ? answer() : -1);
  dlclose(handle);
  return 0;
}
