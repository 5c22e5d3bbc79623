/* ctor_host: links ctor_lib, whose constructor allocated before main. */
#include <stdio.h>

int ctor_lib_value(void);

int main(void) {
  printf("ctor_host: %d\n", ctor_lib_value());
  return 0;
}
