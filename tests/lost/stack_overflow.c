// A stack overflow (issue 26, item 8) and what the program sees of signal
// stacks. The first argument names the shape:
//   overflow    keeps 100 blocks of 4321 bytes, prints "recursing", then
//               recurses until the stack is gone: dies of SIGSEGV
//   view        prints the main thread's and a new thread's sigaltstack()
//               setting and mallinfo2()'s in-use bytes and arena
//   own         installs its own alternate stack and an SA_ONSTACK SIGSEGV
//               handler that prints whether it runs on that stack and
//               exits 7, then overflows
#define _GNU_SOURCE
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int depth(volatile char* above) {
  volatile char frame[512];
  frame[0] = above ? above[0] + 1 : 0;
  return depth(frame) + frame[1];  // not a tail call: every level keeps its frame
}

static int overflow(void) {
  static void* volatile kept[100];
  for (int i = 0; i < 100; ++i) kept[i] = malloc(4321);
  printf("recursing\n");
  fflush(stdout);
  return depth(NULL);
}

static void print_altstack(const char* who) {
  stack_t old;
  memset(&old, 0x5a, sizeof old);
  int r = sigaltstack(NULL, &old);
  printf("%s: r=%d flags=%d sp=%p size=%zu\n", who, r, old.ss_flags, old.ss_sp, old.ss_size);
}

static void* thread_view(void* arg) {
  (void)arg;
  free(malloc(64));  // the thread's first heap event
  print_altstack("thread");
  return NULL;
}

static int view(void) {
  free(malloc(64));
  print_altstack("main");
  pthread_t t;
  pthread_create(&t, NULL, thread_view, NULL);
  pthread_join(t, NULL);
  struct mallinfo2 mi = mallinfo2();
  printf("in use %zu KiB, arena %zu KiB\n", mi.uordblks / 1024, mi.arena / 1024);
  return 0;
}

static char* g_own_stack;
enum { kOwnStackBytes = 1 << 16 };

static void on_segv(int sig, siginfo_t* info, void* context) {
  (void)sig, (void)info, (void)context;
  char here;
  int on_own = &here >= g_own_stack && &here < g_own_stack + kOwnStackBytes;
  const char* line = on_own ? "handler on own stack: yes\n" : "handler on own stack: no\n";
  write(1, line, strlen(line));
  _exit(7);
}

static int own(void) {
  g_own_stack = malloc(kOwnStackBytes);
  stack_t ss = {.ss_sp = g_own_stack, .ss_size = kOwnStackBytes, .ss_flags = 0};
  stack_t old;
  if (sigaltstack(&ss, &old) != 0) return 3;
  printf("before: flags=%d\n", old.ss_flags);
  struct sigaction act;
  memset(&act, 0, sizeof act);
  act.sa_sigaction = on_segv;
  act.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigaction(SIGSEGV, &act, NULL);
  fflush(stdout);
  return depth(NULL);
}

int main(int argc, char** argv) {
  const char* shape = argc > 1 ? argv[1] : "";
  if (strcmp(shape, "overflow") == 0) return overflow();
  if (strcmp(shape, "view") == 0) return view();
  if (strcmp(shape, "own") == 0) return own();
  fprintf(stderr, "usage: stack_overflow overflow|view|own\n");
  return 2;
}
