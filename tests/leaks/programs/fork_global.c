// Issue 27 item 3: the parent holds a 64 B block in a global, forks, and
// both processes exit with it. Valgrind --trace-children=yes: one still
// reachable block (64 B) in each process, nothing lost.
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "leak_common.h"

char* g_kept;  // not static: the store to it stays at -O2

int main(void) {
  g_kept = malloc(64);
  touch(g_kept);
  pid_t child = fork();
  if (child < 0) return 1;
  if (child == 0) {
    touch(g_kept);
    exit(0);
  }
  int status = 0;
  waitpid(child, &status, 0);
  scrub_stack();
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
