// Eight threads doing moving reallocs in one malloc arena (issue 26 item
// 12): the old block of a moving realloc is free as soon as glibc's
// realloc lets go of the arena lock, and another thread may get its address
// at once. The tracer recorded the old block's free only after the real
// realloc returned, so that other thread's alloc of the address could come
// first in the trace: unmatched frees and "replaced" blocks.
#define _GNU_SOURCE
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guest_observables.h"

enum { kThreads = 8, kRounds = 20000 };

static void* worker(void* arg) {
  unsigned seed = (unsigned)(size_t)arg;
  for (int i = 0; i < kRounds; i++) {
    // Past the tcache's sizes (1032 bytes): freed chunks go back to the
    // shared arena, where any thread may take them.
    char* block = malloc(1100 + rand_r(&seed) % 400);
    char* fence = malloc(1100);  // right behind `block`: growing it must move it
    block[0] = 'x';
    char* grown = realloc(block, 2000 + rand_r(&seed) % 2000);
    if (grown == NULL) abort();
    free(fence);
    free(grown);
  }
  return NULL;
}

int main(void) {
  mallopt(M_ARENA_MAX, 1);
  pthread_t threads[kThreads];
  for (int t = 0; t < kThreads; t++)
    if (pthread_create(&threads[t], NULL, worker, (void*)(size_t)(t + 1)) != 0) return 1;
  for (int t = 0; t < kThreads; t++) pthread_join(threads[t], NULL);
  printf("%d threads x %d reallocs done\n", kThreads, kRounds);
  // A realloc that fails leaves its block live (the tracer recorded it
  // freed before the call, and must take that back): this free matches.
  char* kept = malloc(100);
  errno = 0;
  void* huge = realloc(kept, SIZE_MAX / 2);
  printf("huge realloc %s, errno ENOMEM: %s\n", huge ? "succeeded" : "failed",
         errno == ENOMEM ? "yes" : "no");
  free(huge ? huge : kept);
  guest_observe();
  return 0;
}
