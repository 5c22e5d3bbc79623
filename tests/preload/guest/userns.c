// unshare(CLONE_NEWUSER) and setns into a user namespace need a
// single-threaded process (issue 26 item 5): the tracer's own threads made
// every traced program fail them with EINVAL, and `unshare -r` with it.
// Prints whether the call worked; allocates before and after it (both must
// be in the trace).
//   userns unshare | setns   (setns: into the user namespace a child made)
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest_observables.h"

// Through volatile pointers: the compiler may not elide the pairs.
static void* (*volatile allocate)(size_t) = malloc;
static void (*volatile release)(void*) = free;

static void churn(void) {
  for (int i = 0; i < 1000; i++) release(allocate(50 + (size_t)i));
}

// A child in a user namespace of its own, waiting until `hold` closes.
static int join_a_childs_namespace(void) {
  int made[2], hold[2];
  if (pipe(made) != 0 || pipe(hold) != 0) return -1;
  pid_t child = fork();
  if (child == 0) {
    close(hold[1]);
    char c = unshare(CLONE_NEWUSER) == 0 ? 'y' : 'n';
    (void)!write(made[1], &c, 1);
    (void)!read(hold[0], &c, 1);
    _exit(0);
  }
  char c = 'n';
  (void)!read(made[0], &c, 1);
  int rc = -1;
  if (c == 'y') {
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/ns/user", (int)child);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    rc = fd < 0 ? -1 : setns(fd, CLONE_NEWUSER);
    int saved = errno;
    if (fd >= 0) close(fd);
    errno = saved;
  } else {
    errno = EPERM;
  }
  int saved = errno;
  close(hold[1]);
  waitpid(child, NULL, 0);
  errno = saved;
  return rc;
}

int main(int argc, char** argv) {
  int use_setns = argc > 1 && strcmp(argv[1], "setns") == 0;
  churn();
  int rc = use_setns ? join_a_childs_namespace() : unshare(CLONE_NEWUSER);
  printf("%s: %s\n", use_setns ? "setns(CLONE_NEWUSER)" : "unshare(CLONE_NEWUSER)",
         rc == 0 ? "ok" : strerror(errno));
  churn();
  guest_observe();
  return rc == 0 ? 0 : 1;
}
