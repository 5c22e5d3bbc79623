/* early_host: links early_lib, whose constructor runs before the tracer's. */
#include <stdio.h>

#include "guest_observables.h"

int early_lib_made(void);

int main(void) {
  printf("host done after %d\n", early_lib_made());
  guest_observe();
  return 0;
}
