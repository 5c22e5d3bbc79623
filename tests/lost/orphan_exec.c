// An orphan that execs after its parent has ended (issue 26, item 9): the
// program forks a middle process, which forks a worker and exits; the
// worker waits until it is reparented, then execs PROGRAM by the execve
// system call with PATH alone in its environment (untraced, unseen by any
// interposer). It is no longer a descendant of the program by then, so a
// walk of the descendants cannot find it; the program waits for it through
// a pipe the exec'd image holds until it exits. Usage:
//   orphan_exec PROGRAM [ARGS...]
// prints "orphan ok" once the worker's image has ended.
#define _GNU_SOURCE
#include <stdio.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static char* clean_environment[] = {"PATH=/usr/bin:/bin", NULL};

// The worker: waits to be an orphan, then becomes PROGRAM.
static void become_orphan_then_exec(pid_t middle, char** program) {
  while (getppid() == middle) usleep(1000);
  syscall(SYS_execve, program[0], program, clean_environment);
  _exit(127);
}

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  int ends[2];
  if (pipe(ends) != 0) return 3;
  fflush(stdout);
  pid_t middle = fork();
  if (middle < 0) return 3;
  if (middle == 0) {
    close(ends[0]);
    pid_t self = getpid();
    pid_t worker = fork();
    if (worker == 0) become_orphan_then_exec(self, argv + 1);
    _exit(worker < 0 ? 3 : 0);
  }
  close(ends[1]);
  waitpid(middle, NULL, 0);
  char byte;
  while (read(ends[0], &byte, 1) > 0) {
  }
  puts("orphan ok");
  return 0;
}
