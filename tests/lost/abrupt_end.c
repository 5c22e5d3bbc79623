// A process that ends without any exit handler running, with events of two
// threads still in the tracer's buffers (issue 26, item 8). Usage:
//   abrupt_end exit_group N   two threads make N mallocs of 44 bytes each
//                             (kept), then main calls the raw exit_group
//                             system call (as Go's runtime ends)
//   abrupt_end sigkill N      the same, then the process SIGKILLs itself
//   abrupt_end fork_sigkill N a forked child makes N mallocs of 44 bytes and
//                             SIGKILLs itself; the parent waits for it and
//                             returns 0
// Before the threads start, main makes one 4444-byte block and sleeps
// 500 ms, so the tracer writes every event made before it: a trace that
// holds that block holds every event but the 2N, which lets a test check
// the tracer's count of events lost to the last one.
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

enum { kMarkerSize = 4444, kBlockSize = 44 };

static atomic_int g_go = 0, g_done = 0;
static int g_count = 0;

static void* churn(void* unused) {
  (void)unused;
  static void* volatile sink;
  while (!atomic_load(&g_go)) sched_yield();
  for (int i = 0; i < g_count; ++i) sink = malloc(kBlockSize);
  atomic_fetch_add(&g_done, 1);
  for (;;) pause();  // still alive when the process ends
  return NULL;
}

static int fork_sigkill(int count) {
  pid_t pid = fork();
  if (pid == 0) {
    static void* volatile sink;
    for (int i = 0; i < count; ++i) sink = malloc(kBlockSize);
    kill(getpid(), SIGKILL);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL ? 0 : 1;
}

int main(int argc, char** argv) {
  if (argc == 3 && strcmp(argv[1], "fork_sigkill") == 0) return fork_sigkill(atoi(argv[2]));
  if (argc != 3 || (strcmp(argv[1], "exit_group") != 0 && strcmp(argv[1], "sigkill") != 0)) {
    fprintf(stderr, "usage: abrupt_end exit_group|sigkill|fork_sigkill N\n");
    return 2;
  }
  g_count = atoi(argv[2]);
  pthread_t threads[2];
  for (int i = 0; i < 2; ++i) pthread_create(&threads[i], NULL, churn, NULL);
  static void* volatile marker;
  marker = malloc(kMarkerSize);
  usleep(500 * 1000);
  atomic_store(&g_go, 1);
  while (atomic_load(&g_done) < 2) sched_yield();
  if (strcmp(argv[1], "sigkill") == 0) kill(getpid(), SIGKILL);
  syscall(SYS_exit_group, 0);
  return 1;
}
