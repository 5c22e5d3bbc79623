// Built with -fsanitize=address: `memtrail run` must refuse it in one line
// (ASan's runtime aborts when a preload comes first), issue 26 item 7d.
#include <stdio.h>
#include <stdlib.h>

int main(void) {
  char* p = malloc(16);
  p[0] = 'a';
  printf("asan hello %c\n", p[0]);
  free(p);
  return 0;
}
