// Each thread's first call is pthread_getattr_np on itself (as Rust's
// runtime does on the main thread and HotSpot on every thread it starts):
// under the tracer, the allocations glibc makes inside it (fopen of
// /proc/self/maps on the main thread, the cpuset realloc on others) are the
// thread's first events, made while glibc holds the thread's own lock
// (issue 26 item 1: they hung). At exit each thread still holds a block
// only from its stack: the leak scan finds both reachable only if the
// tracer knows where each stack is.
#define _GNU_SOURCE
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "guest_observables.h"

static sem_t g_parked;

// Prints whether the stack glibc reports holds this frame.
static void check_own_stack(const char* who) {
  pthread_attr_t attr;
  int rc = pthread_getattr_np(pthread_self(), &attr);
  void* low = NULL;
  size_t size = 0;
  if (rc == 0) {
    pthread_attr_getstack(&attr, &low, &size);
    pthread_attr_destroy(&attr);
  }
  char here;
  int inside = rc == 0 && (char*)low <= &here && &here < (char*)low + size;
  printf("%s: pthread_getattr_np %s, stack holds its frame: %s\n", who, rc == 0 ? "ok" : "failed",
         inside ? "yes" : "no");
}

static void* worker(void* unused) {
  (void)unused;
  check_own_stack("thread");
  char* volatile held = malloc(4000);  // reachable from this stack only
  strcpy(held, "thread block");
  fflush(stdout);
  sem_post(&g_parked);
  for (;;) pause();  // parked until exit() ends the process
  return NULL;
}

int main(void) {
  check_own_stack("main");
  sem_init(&g_parked, 0, 0);
  pthread_t t;
  if (pthread_create(&t, NULL, worker, NULL) != 0) return 1;
  sem_wait(&g_parked);
  char* volatile held = malloc(3000);  // reachable from main's stack only
  strcpy(held, "main block");
  printf("%s and %s held at exit\n", held, "thread block");
  guest_observe();
  exit(0);
}
