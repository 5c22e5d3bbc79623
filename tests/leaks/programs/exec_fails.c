// Issue 27 item 4: a forked child keeps a 48 B block in a global, tries to
// exec a program that does not exist (ENOENT) and, the exec failed, goes on:
// it leaks one 100 B block for real and exits. Valgrind --trace-children=yes:
// the parent has nothing live; the child 1 definitely lost (100 B) and
// 1 still reachable (48 B). `memtrail check` must fail on it.
#include <errno.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "leak_common.h"

char* g_kept;  // not static: the store to it stays at -O2

__attribute__((noinline)) static void leak_one(void) {
  char* lost = malloc(100);
  if (!lost) return;
  lost[0] = 1;  // touch() reads what lost points to: gcc warns of it unwritten
  touch(lost);
}

int main(void) {
  pid_t child = fork();
  if (child < 0) return 1;
  if (child == 0) {
    g_kept = malloc(48);
    touch(g_kept);
    char* args[] = {"./no-such-program-here", NULL};
    execv(args[0], args);
    if (errno != ENOENT) _exit(2);
    leak_one();
    scrub_stack();
    exit(0);
  }
  int status = 0;
  waitpid(child, &status, 0);
  scrub_stack();
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
