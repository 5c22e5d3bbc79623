// The program exec_strdup's child execs: it allocates and frees, so its
// own image has nothing live at exit (Valgrind: all heap blocks freed).
#include <stdlib.h>

#include "leak_common.h"

int main(void) {
  void* p = malloc(40);
  touch(p);
  free(p);
  return 0;
}
