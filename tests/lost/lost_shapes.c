// Ways a program's events could go missing from its trace (issue 26, items
// 8-10). The first argument names the shape; each makes a known number of
// allocations of a size no start-up code uses, so a test can count them:
//   handler     main mallocs and frees in a loop while another thread sends
//               it SIGUSR1 300 times; the handler mallocs 10 blocks of 777
//               bytes each time (3000 in all), freed by main at the end
//   quick_exit  1000 blocks of 333 bytes kept, then quick_exit(0)
//   exit_group  300000 blocks of 44 bytes kept, half of them before a pause
//               (the recorder writes what it has), then a raw exit_group(0)
//   exec-unset  runs itself ("child") with LD_PRELOAD and MEMTRAIL_* removed
//               from the environment it passes to execve
//   exec-clear  the same after clearenv(), through execvp
//   child       100 blocks of 555 bytes, freed; prints "child done"
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest_observables.h"

extern char** environ;

enum { kSignals = 300, kPerSignal = 10 };
static void* g_handler_blocks[kSignals * kPerSignal];
static volatile sig_atomic_t g_handled = 0;
static volatile int g_handler_mallocs = 0;

static void on_usr1(int sig) {
  (void)sig;
  for (int i = 0; i < kPerSignal; ++i) {
    int n = g_handler_mallocs;
    if (n < kSignals * kPerSignal) {
      g_handler_blocks[n] = malloc(777);
      g_handler_mallocs = n + 1;
    }
  }
  g_handled = g_handled + 1;
}

static void* send_signals(void* target) {
  pthread_t main_thread = *(pthread_t*)target;
  for (int i = 0; i < kSignals; ++i) {
    int before = g_handled;
    pthread_kill(main_thread, SIGUSR1);
    while (g_handled == before) sched_yield();  // one at a time: none merge
  }
  return NULL;
}

static int handler_shape(void) {
  struct sigaction act;
  memset(&act, 0, sizeof act);
  act.sa_handler = on_usr1;
  sigaction(SIGUSR1, &act, NULL);
  pthread_t self = pthread_self(), sender;
  pthread_create(&sender, NULL, send_signals, &self);
  // Main spends its time in malloc and free (and so in the recorder).
  while (g_handled < kSignals) {
    void* p = malloc(24);
    free(p);
  }
  pthread_join(sender, NULL);
  for (int i = 0; i < g_handler_mallocs; ++i) free(g_handler_blocks[i]);
  printf("handler mallocs %d\n", g_handler_mallocs);
  guest_observe();
  return 0;
}

static void keep(int count, size_t size) {
  static void* volatile sink;
  (void)sink;
  for (int i = 0; i < count; ++i) sink = malloc(size);
}

static int exec_child(const char* self, int clear) {
  pid_t pid = fork();
  if (pid == 0) {
    char* argv[] = {(char*)self, "child", NULL};
    if (clear) {
      clearenv();
      setenv("PATH", "/usr/bin:/bin", 1);
      execvp(self, argv);
    } else {
      int n = 0;
      while (environ[n]) ++n;
      char** env = calloc(n + 1, sizeof(char*));
      int k = 0;
      for (int i = 0; i < n; ++i)
        if (strncmp(environ[i], "LD_PRELOAD=", 11) != 0 && strncmp(environ[i], "MEMTRAIL_", 9) != 0)
          env[k++] = environ[i];
      execve(self, argv, env);
    }
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  printf("parent done, child %s\n",
         WIFEXITED(status) && WEXITSTATUS(status) == 0 ? "ok" : "failed");
  guest_observe();
  return 0;
}

int main(int argc, char** argv) {
  const char* shape = argc > 1 ? argv[1] : "";
  if (strcmp(shape, "handler") == 0) return handler_shape();
  if (strcmp(shape, "quick_exit") == 0) {
    keep(1000, 333);
    guest_observe();
    fflush(stdout);
    quick_exit(0);
  }
  if (strcmp(shape, "exit_group") == 0) {
    keep(150000, 44);
    usleep(300 * 1000);
    keep(150000, 44);
    guest_observe();
    syscall(SYS_exit_group, 0);
  }
  if (strcmp(shape, "exec-unset") == 0) return exec_child(argv[0], 0);
  if (strcmp(shape, "exec-clear") == 0) return exec_child(argv[0], 1);
  if (strcmp(shape, "child") == 0) {
    static void* volatile block;
    for (int i = 0; i < 100; ++i) {
      block = malloc(555);
      free(block);
    }
    printf("child done\n");
    return 0;
  }
  fprintf(stderr, "usage: lost_shapes handler|quick_exit|exit_group|exec-unset|exec-clear\n");
  return 2;
}
