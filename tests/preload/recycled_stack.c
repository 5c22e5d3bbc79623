// A thread leaks a block whose address it left ~7 KiB down its stack (glibc
// zeroes an exiting thread's stack only below 16 KiB under its last frame);
// after it is joined, glibc gives its cached stack to the next thread, which
// parks at a shallow depth until exit. The stale address is below the parked thread's
// stack pointer: the leak is direct (1 block of 4321 bytes), not reachable;
// the parked thread's own block (16 bytes, held in its frame) is reachable.
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int parked;

__attribute__((noinline)) static void bury(int depth) {
  char pad[512];
  memset(pad, depth, sizeof pad);
  if (depth > 0) {
    bury(depth - 1);
  } else {
    void* volatile leaked = malloc(4321);
    (void)leaked;
  }
  __asm__ volatile("" : : "r"(pad) : "memory");
}

static void* leaker(void* arg) {
  (void)arg;
  bury(12);  // ~7 KiB deep: glibc zeroes a dead thread's stack only below 16 KiB
  return NULL;
}

static void* parker(void* arg) {
  (void)arg;
  void* volatile held = malloc(16);  // reachable; also makes this thread known to the tracer
  pthread_mutex_lock(&lock);
  parked = 1;
  pthread_cond_broadcast(&cond);
  for (;;) pthread_cond_wait(&cond, &lock);
  return held;
}

int main(void) {
  pthread_t t;
  pthread_create(&t, NULL, leaker, NULL);
  pthread_join(t, NULL);
  pthread_create(&t, NULL, parker, NULL);
  pthread_detach(t);
  pthread_mutex_lock(&lock);
  while (!parked) pthread_cond_wait(&cond, &lock);
  pthread_mutex_unlock(&lock);
  return 0;
}
