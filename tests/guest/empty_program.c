// A C program that does nothing but report what it sees (issue 26, item 3):
// under the tracer, whose libstdc++ and zstd are in the process only because
// of the preload, its mallinfo2() in-use and arena must be what they are
// untraced (libstdc++'s emergency exception pool, ~72 KiB, was counted).
#include <stdio.h>

#include "guest_observables.h"

int main(void) {
  puts("empty program");
  guest_observe();
  return 0;
}
