/* ctor_lib: a linked library whose constructor allocates before the
 * tracer's own constructor runs (issue 14, item 5). It keeps 5000 B in a
 * global (reachable) and leaks 64 B (direct). */
#include <stdlib.h>
#include <string.h>

char* ctor_lib_kept;

__attribute__((noinline)) static void leak_64(void) {
  char* lost = malloc(64); /* ctor_lib.c:10 */
  memset(lost, 3, 64);
  __asm__ volatile("" : : "r"(lost) : "memory");
}

/* Overwrites the dead frames leak_64 left below the stack pointer, so no
 * stale copy of the leaked address can make it look reachable. */
__attribute__((noinline)) static void scrub_stack(void) {
  volatile char dirt[4096];
  for (unsigned i = 0; i < sizeof dirt; ++i) dirt[i] = 0;
}

/* Start-up churn: 3000 blocks of 2345 B made and freed in order, the same
 * address again and again; the trace must pair every free with its block. */
__attribute__((noinline)) static void churn(void) {
  for (int i = 0; i < 3000; ++i) {
    char* p = malloc(2345);
    __asm__ volatile("" : : "r"(p) : "memory");
    free(p);
  }
}

__attribute__((constructor)) static void ctor_lib_init(void) {
  churn();
  ctor_lib_kept = malloc(5000); /* ctor_lib.c:34 */
  memset(ctor_lib_kept, 1, 5000);
  leak_64();
  scrub_stack();
}

int ctor_lib_value(void) {
  return ctor_lib_kept[4999];
}
