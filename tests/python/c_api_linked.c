// The C API linked: libmemtrail.so is a dependency, and the program runs
// untraced when nothing starts the recorder.
#include "memtrail/c_api.h"

#include <stdio.h>
#include <stdlib.h>

int main(void) {
  for (int step = 0; step < 10; ++step) {
    memtrail_iteration_begin("step");
    free(malloc(64));
    memtrail_iteration_end("step");
  }
  memtrail_mark("done");
  printf("api %d, %s\n", memtrail_api_version(), memtrail_tracing() ? "tracing" : "not tracing");
  return 0;
}
