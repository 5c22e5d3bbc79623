// A pending dlerror() must survive the tracer (issue 26, item 7a): its
// munmap interposer, reached from libunwind's TSD destructor when a thread
// exits, resolved the next munmap with dlsym on first use, and a dlsym that
// succeeds clears the calling thread's pending error. Each thread leaves an
// error pending, allocates (so it is traced, with stacks), unmaps a page of
// its own, and reports its dlerror(); then the main thread reports its own.
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "guest_observables.h"

static void* volatile keep;

static int error_pending(const char* who) {
  const char* e = dlerror();
  printf("%s: %s\n", who, e != NULL && strstr(e, "no-such-library") ? "error kept" : "error lost");
  return e != NULL;
}

static void* worker(void* arg) {
  (void)arg;
  dlopen("libmemtrail-no-such-library.so", RTLD_NOW);
  for (int i = 0; i < 100; ++i) {
    keep = malloc(64);
    free(keep);
  }
  void* page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (page != MAP_FAILED) munmap(page, 4096);
  error_pending("thread");
  return NULL;
}

int main(void) {
  dlopen("libmemtrail-no-such-library.so", RTLD_NOW);
  for (int round = 0; round < 2; ++round) {
    pthread_t t;
    if (pthread_create(&t, NULL, worker, NULL) != 0) return 1;
    pthread_join(t, NULL);
  }
  void* page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (page != MAP_FAILED) munmap(page, 4096);
  int rc = error_pending("main") ? 0 : 1;
  guest_observe();
  return rc;
}
