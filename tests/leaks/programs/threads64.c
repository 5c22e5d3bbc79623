// Expected (Valgrind memcheck): definitely lost 0; indirectly lost 0;
// possibly lost 0; still reachable 64 blocks / 4,096 B.
// memtrail: reachable 64 / 4096 (the 64 threads' DTVs, which ld.so
// allocated, are runtime blocks; Valgrind calls them possibly lost).
// LSan: nothing leaked.
// 64 threads, each holding the only pointer to its 64-byte block, wait in a
// barrier that never fills while main exits (issue 27 item 1): the scan
// stops all 64 for its whole length. Also the program the stop's cost is
// measured on (docs/tracing.md).
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "leak_common.h"

enum { kThreads = 64 };

static pthread_barrier_t g_never;  // kThreads + 2: never completes
static pthread_barrier_t g_started;

static void* holder(void* arg) {
  (void)arg;
  char* held = (char*)malloc(64);
  memset(held, 5, 64);
  pthread_barrier_wait(&g_started);
  pthread_barrier_wait(&g_never);
  touch(held);
  return NULL;
}

int main(void) {
  pthread_barrier_init(&g_started, NULL, kThreads + 1);
  pthread_barrier_init(&g_never, NULL, kThreads + 2);
  for (int i = 0; i < kThreads; ++i) {
    pthread_t t;
    pthread_create(&t, NULL, holder, NULL);
  }
  pthread_barrier_wait(&g_started);
  scrub_stack();
  return 0;
}
