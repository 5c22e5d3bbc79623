// A child that gives up root (setuid 65534) or chroots, then execs
// (issue 26, item 9): the new image cannot reach the run directory by its
// path, so its trace is missing; `memtrail run` must say so, never "trace
// written". Usage:
//   exec_after_drop setuid PROGRAM     child: setuid(65534), exec PROGRAM
//   exec_after_drop chroot DIR PROGRAM child: chroot(DIR), exec PROGRAM
//                                      (a path inside DIR)
//   exec_after_drop plain PROGRAM      child: exec PROGRAM
// Prints "no setuid: REASON" / "no chroot: REASON" and exits 0 when the
// drop is not permitted (not root).
#define _GNU_SOURCE
#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

// Returns NULL when the child may exec, else why it may not.
static const char* drop(const char* how, const char* dir) {
  if (strcmp(how, "setuid") == 0) {
    if (setgroups(0, NULL) != 0 || setgid(65534) != 0 || setuid(65534) != 0) return strerror(errno);
  } else if (strcmp(how, "chroot") == 0) {
    if (chroot(dir) != 0 || chdir("/") != 0) return strerror(errno);
  }
  return NULL;
}

// Whether this process may drop at all (checked before the fork, so the
// output says so once and the child is not started).
static const char* can_drop(const char* how) {
  if (strcmp(how, "plain") == 0 || geteuid() == 0) return NULL;
  return "not root";
}

int main(int argc, char** argv) {
  if (argc < 3) return 2;
  const char* how = argv[1];
  const char* program = argv[argc - 1];
  const char* dir = argc > 3 ? argv[2] : "/";
  const char* refused = can_drop(how);
  if (refused) {
    printf("no %s: %s\n", how, refused);
    return 0;
  }
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    const char* why = drop(how, dir);
    if (why) {
      printf("no %s: %s\n", how, why);
      _exit(0);
    }
    execl(program, program, (char*)NULL);
    printf("exec failed: %s\n", strerror(errno));
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  printf("child %s\n", WIFEXITED(status) && WEXITSTATUS(status) == 0 ? "ok" : "failed");
  return 0;
}
