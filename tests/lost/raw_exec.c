// A child exec'd by the execve system call itself, with an environment of
// its own (issue 26, item 9): what Go's os/exec and other runtimes that
// fork and exec by raw system calls do. No interposer sees the exec, and
// the new image's environment lacks LD_PRELOAD: it runs untraced, and
// `memtrail run` must say its trace is missing. Usage:
//   raw_exec [-k] TIMES PROGRAM [ARGS...]
// forks TIMES children one after the other, each exec'ing PROGRAM with
// PATH alone in its environment (with -k: the program's own environment),
// and waits for each; prints "children ok" or "child failed".
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

static char* clean_environment[] = {"PATH=/usr/bin:/bin", NULL};

int main(int argc, char** argv) {
  char** environment = clean_environment;
  if (argc > 1 && argv[1][0] == '-' && argv[1][1] == 'k') {
    environment = environ;
    --argc;
    ++argv;
  }
  if (argc < 3) return 2;
  int times = atoi(argv[1]);
  fflush(stdout);
  for (int i = 0; i < times; ++i) {
    pid_t child = fork();
    if (child < 0) return 3;
    if (child == 0) {
      syscall(SYS_execve, argv[2], argv + 2, environment);
      _exit(127);
    }
    int status = 0;
    if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      puts("child failed");
      return 0;
    }
  }
  puts("children ok");
  return 0;
}
