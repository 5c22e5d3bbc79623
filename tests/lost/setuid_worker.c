// A worker forked after the parent gives up root (issue 26, item 9): the
// run directory is root's, so the worker cannot create its trace there;
// `memtrail run` must then say whose trace is missing and why, never
// "trace written". Prints "no setuid: REASON" and exits 0 when not root.
#define _GNU_SOURCE
#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void) {
  if (setgroups(0, NULL) != 0 || setgid(65534) != 0 || setuid(65534) != 0) {
    printf("no setuid: %s\n", strerror(errno));
    return 0;
  }
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    static void* volatile block;
    for (int i = 0; i < 100; ++i) {
      block = malloc(555);
      free(block);
    }
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  printf("worker %s\n", WIFEXITED(status) && WEXITSTATUS(status) == 0 ? "ok" : "failed");
  return 0;
}
