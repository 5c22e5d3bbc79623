// A worker forked after the parent chroots into an empty directory (issue
// 26, item 9): the run directory's path does not exist any more in the
// child's view, yet its trace must be written, or run must say it is not.
// Prints "no chroot: REASON" and exits 0 when chroot is not permitted.
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest_observables.h"

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  mkdir(argv[1], 0755);
  if (chroot(argv[1]) != 0) {
    printf("no chroot: %s\n", strerror(errno));
    return 0;
  }
  if (chdir("/") != 0) return 3;
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
  guest_observe();
  return 0;
}
