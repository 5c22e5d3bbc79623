// Expected (Valgrind memcheck): definitely lost 1 block / 77 B; indirectly
// lost 0; possibly lost 0; still reachable 0.
// memtrail: direct 1 / 77; stdout's buffer (allocated by libc's
// _IO_file_doallocate on the first printf) is a runtime block.
// LSan: Direct 1 / 77.
// libc's own buffers (issue 27 item 7): Valgrind runs __libc_freeres at
// exit, which gives stdio's buffers back, and reports nothing for them (it
// does not with --run-libc-freeres=no either); LSan ignores them. memtrail
// counts them with the runtime's blocks.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "leak_common.h"

__attribute__((noinline)) static void leak(void) {
  char* p = (char*)malloc(77);
  memset(p, 7, 77);
  touch(p);
}

int main(void) {
  printf("libc_buffers: stdout gets its buffer now\n");
  leak();
  scrub_stack();
  return 0;
}
