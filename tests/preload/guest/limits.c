// Limits a program sets for itself (issue 26 item 5); under the tracer the
// trace is written by the program's own process, under the same limits.
//   limits plain        allocate and print (run under `ulimit -v`)
//   limits fsize DIR    RLIMIT_FSIZE 64 KiB, then allocate far more events
//                       than fit in 64 KiB of trace, and write DIR/out
//                       (10 KiB): untraced nothing passes the limit.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "guest_observables.h"

// Through volatile pointers: the compiler may not elide the pairs.
static void* (*volatile allocate)(size_t) = malloc;
static void (*volatile release)(void*) = free;

static long churn(int n) {
  long sum = 0;
  for (int i = 0; i < n; i++) {
    char* p = allocate(16 + (size_t)(i * 7919) % 4000);
    p[0] = (char)(i & 0x7f);
    sum += p[0];
    release(p);
  }
  return sum;
}

static int write_own_file(const char* dir) {
  char path[4096];
  snprintf(path, sizeof path, "%s/out", dir);
  FILE* f = fopen(path, "w");
  if (!f) return 1;
  char line[1024];
  memset(line, 'x', sizeof line - 1);
  line[sizeof line - 1] = '\n';
  for (int i = 0; i < 10; i++) fwrite(line, 1, sizeof line, f);
  if (fclose(f) != 0) return 1;
  printf("wrote %zu bytes\n", 10 * sizeof line);
  return 0;
}

int main(int argc, char** argv) {
  if (argc >= 3 && strcmp(argv[1], "fsize") == 0) {
    struct rlimit limit = {64 * 1024, 64 * 1024};
    if (setrlimit(RLIMIT_FSIZE, &limit) != 0) return 2;
    printf("sum %ld\n", churn(400000));
    int rc = write_own_file(argv[2]);
    guest_observe();
    return rc;
  }
  printf("sum %ld\n", churn(10000));
  guest_observe();
  return 0;
}
