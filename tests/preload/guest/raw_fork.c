// A child made by a fork that runs no fork handlers (issue 26 item 2):
// glibc's _Fork(), or the fork system call itself. The child allocates and
// ends by exit() or _exit(); under the tracer it kept its parent's session
// and at exit waited for a writer thread that does not exist in it.
//   raw_fork _Fork|syscall exit|_exit
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest_observables.h"

enum { kChildBlocks = 20000 };

static pid_t fork_without_handlers(const char* how) {
  if (strcmp(how, "_Fork") == 0) return _Fork();
#ifdef SYS_fork
  return (pid_t)syscall(SYS_fork);
#else
  return (pid_t)syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
#endif
}

// Through volatile pointers: the compiler may not elide the pairs.
static void* (*volatile allocate)(size_t) = malloc;
static void (*volatile release)(void*) = free;

static long churn(int n) {
  long sum = 0;
  for (int i = 0; i < n; i++) {
    char* p = allocate(32 + i % 64);
    p[0] = (char)(i & 0x7f);
    sum += p[0];
    release(p);
  }
  return sum;
}

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  int use_exit = strcmp(argv[2], "exit") == 0;
  char* kept = allocate(100);
  long before = churn(1000);
  fflush(stdout);
  pid_t pid = fork_without_handlers(argv[1]);
  if (pid < 0) return 3;
  if (pid == 0) {
    long sum = churn(kChildBlocks);
    char* left = allocate(77);  // live at the child's end
    left[0] = 1;
    printf("child: %d blocks, sum %ld\n", kChildBlocks, sum);
    fflush(stdout);
    if (use_exit) exit(7);
    _exit(7);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return 4;
  printf("parent: sum %ld, child exited with %d\n", before,
         WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
  free(kept);
  guest_observe();
  return 0;
}
