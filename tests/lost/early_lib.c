/* early_lib: a linked library whose constructor makes more heap events than
 * the tracer's stacked start-up buffer holds (issue 26, item 11: libtorch's
 * operator registry makes ~1.4M before the tracer's constructor runs). 600,000
 * blocks of 48 bytes, each freed at once: 1.2M events before start-up. */
#include <stdlib.h>

static int made;
int early_lib_made(void) {
  return made;
}

__attribute__((constructor)) static void churn_before_the_tracer(void) {
  for (int i = 0; i < 600000; ++i) {
    void* p = malloc(48);
    __asm__ volatile("" : : "r"(p) : "memory");
    free(p);
    ++made;
  }
}
