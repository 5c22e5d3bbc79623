// Prints what a program can tell of its descriptor table while several of
// its threads allocate (so the tracer is busy recording them): the entries
// of /proc/self/fd, the numbers open by fcntl(F_GETFD) up to the soft
// RLIMIT_NOFILE (both as observe lines, guest_observables.h), and its
// lowest free number. Traced and untraced they must be the same: the tracer keeps its trace file,
// /proc/self/statm and the run directory's two in its writer thread's own table, and libunwind's
// validation pipe is no descriptor at all (docs/tracing.md, "Descriptors"). The
// program's own first files (opened here) must get the same numbers too.
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "descriptor_views.h"
#include "guest_observables.h"

enum { kThreads = 4 };
static pthread_barrier_t counted;

static void* worker(void* arg) {
  (void)arg;
  for (int i = 0; i < 2000; ++i) free(malloc(16 + i % 512));
  pthread_barrier_wait(&counted);  // alive while the main thread counts
  return NULL;
}

static int count_and_print(void) {
  pthread_barrier_init(&counted, NULL, kThreads + 1);
  pthread_t threads[kThreads];
  for (int i = 0; i < kThreads; ++i)
    if (pthread_create(&threads[i], NULL, worker, NULL) != 0) return 1;
  int a = open("/dev/null", O_RDONLY), b = open("/dev/null", O_RDONLY);
  int listed = listed_descriptors(), counted_open = open_by_fcntl(), low = lowest_free();
  pthread_barrier_wait(&counted);
  for (int i = 0; i < kThreads; ++i) pthread_join(threads[i], NULL);
  // The counts as observe lines: parity.hpp compares them view by view.
  printf("observe fds_listed %d\nobserve fds_fcntl %d\n", listed, counted_open);
  printf("lowest free descriptor: %d\n", low);
  printf("first files opened: %d %d\n", a, b);
  close(a);
  close(b);
  return 0;
}

// "fork": a fork child counts (its table is a copy of the forking thread's,
// and its own trace file is in its own writer's table); the parent prints
// the usual figures after it.
int main(int argc, char** argv) {
  if (argc > 1 && strcmp(argv[1], "fork") == 0) {
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) return 1;
    if (pid == 0) _exit(count_and_print() == 0 && fflush(stdout) == 0 ? 0 : 1);
    int status = 0;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return 1;
    printf("child exit: %d\n", WEXITSTATUS(status));
  } else if (count_and_print() != 0) {
    return 1;
  }
  guest_observe();
  return 0;
}
