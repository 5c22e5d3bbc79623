// The image exec_after_drop execs: 100 allocations of 555 bytes, then one
// line. Built twice: dynamic (traced when exec'd) and static (for a chroot
// that holds nothing else).
#include <stdio.h>
#include <stdlib.h>

int main(void) {
  static void* volatile block;
  for (int i = 0; i < 100; ++i) {
    block = malloc(555);
    free(block);
  }
  puts("target ok");
  return 0;
}
