// Expected (Valgrind memcheck): definitely lost 0; indirectly lost 0;
// possibly lost 0; still reachable 8 blocks / 256 B.
// memtrail: reachable 8 / 256 (the thread's DTV, which ld.so allocated, is a
// runtime block; Valgrind calls it possibly lost). LSan: nothing leaked.
// A thread works inside a dl_iterate_phdr callback, which holds the dynamic
// linker's lock, 200 ms a round; each round replaces the eight 32-byte
// blocks its stack holds (issue 27 item 2). main exits meanwhile. A scan
// that waited for that lock (a dl_iterate_phdr of its own, an unwinder that
// uses it) would read the blocks of one round after the thread had freed
// them for the next, and call them leaked.
#define _GNU_SOURCE
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "leak_common.h"

static volatile int g_working;

static int work_in_callback(struct dl_phdr_info* info, size_t size, void* data) {
  (void)info;
  (void)size;
  void** in_flight = (void**)data;  // in the worker's frame
  for (int i = 0; i < 8; ++i) {
    void* old = in_flight[i];
    in_flight[i] = malloc(32);
    memset(in_flight[i], 4, 32);
    free(old);
  }
  g_working = 1;
  struct timespec pause = {0, 200 * 1000 * 1000};
  nanosleep(&pause, NULL);
  return 1;  // one module a round
}

static void* worker(void* arg) {
  (void)arg;
  void* in_flight[8] = {0};
  for (;;) {
    dl_iterate_phdr(work_in_callback, in_flight);
    touch(in_flight);
  }
  return NULL;
}

int main(void) {
  pthread_t t;
  pthread_create(&t, NULL, worker, NULL);
  while (!g_working) {
  }
  scrub_stack();
  return 0;
}
