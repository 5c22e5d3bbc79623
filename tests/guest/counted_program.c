// Runs on counting_allocator (preloaded): 1000 blocks made and freed plus one
// kept, then prints the allocator's counts since main began and at exit.
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include "guest_observables.h"

typedef void (*counts_fn)(unsigned long*, unsigned long*);

static counts_fn counts;
static void* volatile escape;  // so the compiler keeps each malloc/free pair
static unsigned long m0, f0;

static void at_exit(void) {
  unsigned long m, f;
  counts(&m, &f);
  printf("at exit: %lu mallocs, %lu frees\n", m - m0, f - f0);
}

int main(void) {
  counts = (counts_fn)dlsym(RTLD_DEFAULT, "counting_allocator_counts");
  if (counts == NULL) {
    puts("counting_allocator is not preloaded");
    return 2;
  }
  counts(&m0, &f0);
  atexit(at_exit);
  volatile char* kept = malloc(1000);
  kept[0] = 1;
  for (int i = 0; i < 1000; ++i) {
    char* p = malloc(100 + i);
    p[0] = (char)i;
    escape = p;
    free(p);
  }
  unsigned long m, f;
  counts(&m, &f);
  printf("in main: %lu mallocs, %lu frees\n", m - m0, f - f0);
  guest_observe();
  return 0;
}
