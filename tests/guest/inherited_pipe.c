// A pipe's write end inherited across fork and exec: the child closes it
// first thing and the parent must see EOF at once, while the child still
// lives. The tracer's writer thread copies the descriptor table as it
// starts (its own table: docs/tracing.md, "Descriptors") and must close
// every copy of the program's numbers in it: a write end the writer kept
// would hold EOF back until the child's exit. The child leaves only when
// the parent says so (after EOF, or after 10 s without it).
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest_observables.h"

enum { kDataFd = 40, kGoFd = 41 };  // the child's numbers for the two pipes

static int child(void) {
  close(kDataFd);  // the write end: the parent's read sees EOF now
  char go;
  while (read(kGoFd, &go, 1) < 0 && errno == EINTR) continue;
  return 0;
}

// Waits up to 10 s for EOF on `fd`.
static int saw_eof(int fd) {
  struct pollfd p = {fd, POLLIN, 0};
  for (;;) {
    int n = poll(&p, 1, 10000);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return 0;
    char buf[16];
    ssize_t got = read(fd, buf, sizeof buf);
    if (got == 0) return 1;
    if (got < 0 && errno != EINTR) return 0;
  }
}

int main(int argc, char** argv) {
  if (argc > 1) return child();
  int data[2], go[2];
  if (pipe2(data, O_CLOEXEC) != 0 || pipe2(go, O_CLOEXEC) != 0) return 1;
  pid_t pid = fork();
  if (pid < 0) return 1;
  if (pid == 0) {
    // dup2 clears close-on-exec: only these two reach the exec'd image.
    if (dup2(data[1], kDataFd) < 0 || dup2(go[0], kGoFd) < 0) _exit(1);
    execl("/proc/self/exe", argv[0], "child", (char*)NULL);
    _exit(127);
  }
  close(data[1]);
  close(go[0]);
  int eof = saw_eof(data[0]);
  printf("EOF while the child lives: %s\n", eof ? "yes" : "no");
  if (write(go[1], "g", 1) != 1) return 1;
  int status = 0;
  waitpid(pid, &status, 0);
  printf("child exit: %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  guest_observe();
  return 0;
}
