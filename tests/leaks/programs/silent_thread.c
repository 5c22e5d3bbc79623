// Expected (Valgrind memcheck): definitely lost 0; indirectly lost 0;
// possibly lost 0; still reachable 1 block / 96 B.
// memtrail: reachable 1 / 96 (the thread's DTV, which ld.so allocated, is a
// runtime block; Valgrind runs __libc_freeres, which frees it).
// LSan: nothing leaked.
// A thread that never allocates holds the only pointer to a block main
// allocated (issue 27 item 2): it takes the pointer from a global, clears the
// global and waits forever; main exits meanwhile. Its stack and registers are
// roots although the thread never recorded an event.
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "leak_common.h"

static void* volatile g_handoff;
static volatile int g_taken;

static void* silent(void* arg) {
  (void)arg;
  void* held;
  while ((held = g_handoff) == NULL) {
  }
  g_handoff = NULL;
  g_taken = 1;
  for (;;) {
    pause();
    touch(held);
  }
  return NULL;
}

__attribute__((noinline)) static void hand_over(void) {
  char* p = (char*)malloc(96);
  memset(p, 1, 96);
  g_handoff = p;
  p = NULL;
  touch(&p);
}

int main(void) {
  pthread_t t;
  pthread_create(&t, NULL, silent, NULL);
  hand_over();
  while (!g_taken) {
  }
  scrub_stack();
  return 0;
}
