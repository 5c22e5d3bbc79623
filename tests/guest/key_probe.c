// Creates pthread keys until pthread_key_create fails, after threads have
// run (so the tracer has recorded stacks on them), and prints how many it
// got: the tracer must take none of the process's PTHREAD_KEYS_MAX (it took
// two: 1,022 instead of 1,024; issue 26, item 7b). The keys' destructors
// free per-thread blocks, which the trace must still match.
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "guest_observables.h"

static pthread_key_t first_key;

static void* worker(void* arg) {
  (void)arg;
  pthread_setspecific(first_key, malloc(32));
  for (int i = 0; i < 100; ++i) free(malloc(64 + i));
  return NULL;
}

int main(void) {
  if (pthread_key_create(&first_key, free) != 0) return 1;
  for (int i = 0; i < 4; ++i) {
    pthread_t t;
    if (pthread_create(&t, NULL, worker, NULL) != 0) return 1;
    pthread_join(t, NULL);
  }
  int keys = 1;
  for (;;) {
    pthread_key_t k;
    int rc = pthread_key_create(&k, NULL);
    if (rc != 0) {
      printf("keys: %d (%s)\n", keys, rc == EAGAIN ? "EAGAIN" : "other error");
      break;
    }
    ++keys;
  }
  guest_observe();
  return 0;
}
