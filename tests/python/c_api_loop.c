// The C API through its dlsym shim (MEMTRAIL_C_API_DLSYM): the program does
// not link libmemtrail; under `memtrail run` the calls reach the recorder,
// elsewhere they do nothing. argv[1] = "leak": keeps 256 bytes per step.
#define MEMTRAIL_C_API_DLSYM
#include "memtrail/c_api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// Stores keep GCC from dropping a malloc whose block is only freed.
void* volatile sink;

int main(int argc, char** argv) {
  int leak = argc > 1 && strcmp(argv[1], "leak") == 0;
  void* kept[40] = {0};
  memtrail_dl_mark("start");
  memtrail_dl_scope_begin("setup");
  char* table = malloc(1000);
  sink = table;
  memtrail_dl_scope_end("setup");
  for (int step = 0; step < 40; ++step) {
    memtrail_dl_iteration_begin("step");
    void* scratch = malloc(512);
    sink = scratch;
    if (leak) kept[step] = malloc(256);
    free(scratch);
    memtrail_dl_iteration_end("step");
  }
  memtrail_dl_pause();
  void* unseen = malloc(777);
  sink = unseen;
  memtrail_dl_resume();
  free(unseen);
  printf("%s\n", memtrail_dl_tracing() ? "tracing" : "not tracing");
  for (int i = 0; i < 40; ++i) free(kept[i]);
  free(table);
  return 0;
}
