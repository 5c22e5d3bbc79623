/* early_host: links early_lib, whose constructor runs before the tracer's. */
#include <stdio.h>

int early_lib_made(void);

int main(void) {
  printf("host done after %d\n", early_lib_made());
  return 0;
}
