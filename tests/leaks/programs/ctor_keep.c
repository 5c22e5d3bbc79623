// Linked to ctor_libs: its constructor allocates 5000 B and keeps the block
// in a global of this library (reachable at exit).
#include <stdlib.h>
#include <string.h>

void* ctor_kept_block;

__attribute__((constructor)) static void keep_init(void) {
  ctor_kept_block = malloc(5000);
  memset(ctor_kept_block, 1, 5000);
}

int ctor_keep_ready(void) {
  return ctor_kept_block != NULL;
}
