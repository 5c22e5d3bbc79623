// unshare(CLONE_NEWUSER) needs a single-threaded process (issue 26 item 5):
// the tracer's own threads made every traced program fail it with EINVAL,
// and `unshare -r` with it. Prints whether the call worked; allocates
// before and after it (both must be in the trace).
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// Through volatile pointers: the compiler may not elide the pairs.
static void* (*volatile allocate)(size_t) = malloc;
static void (*volatile release)(void*) = free;

int main(void) {
  for (int i = 0; i < 1000; i++) release(allocate(50 + (size_t)i));
  int rc = unshare(CLONE_NEWUSER);
  printf("unshare(CLONE_NEWUSER): %s\n", rc == 0 ? "ok" : strerror(errno));
  for (int i = 0; i < 1000; i++) release(allocate(50 + (size_t)i));
  return rc == 0 ? 0 : 1;
}
