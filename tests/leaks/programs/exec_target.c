// The program exec_strdup's child execs: it allocates and frees, so its
// own image has nothing live at exit (Valgrind: all heap blocks freed).
#include <stdlib.h>

#include "leak_common.h"

int main(void) {
  char* p = malloc(40);
  if (!p) return 1;
  p[0] = 1;  // touch() reads what p points to: gcc warns of it unwritten
  touch(p);
  free(p);
  return 0;
}
