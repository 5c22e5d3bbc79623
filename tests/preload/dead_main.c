// The program that found the bug (built -O0): main's only pointer to the
// 123-byte block dies with main's frame. Valgrind and LSan: 1 direct leak,
// 123 bytes. memtrail scanned from its own stack pointer, so main's dead slot
// still counted in some runs (which ones depended on the environment's size).
#include <stdlib.h>
#include <string.h>

int main(void) {
  char* p = (char*)malloc(123);
  memset(p, 1, 123);
  return p[3] == 1 ? 0 : 1;
}
