// Exits from main while four threads still run: two computing (and
// allocating) in an endless loop, one asleep, one blocked in read() on a pipe nobody writes.
// Before that it makes kPairs malloc/free pairs of kSize bytes and leaks
// kLeaks blocks of kLeakSize bytes; prints one line.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

enum { kPairs = 1000, kSize = 1234, kLeaks = 7, kLeakSize = 4242 };

static int g_pipe[2];
static volatile unsigned long g_spins;
static void* volatile g_leaked[kLeaks];  // volatile: the calls stay

// Computes and allocates without pause: the tracer's drain never catches up
// with it, which is what once held the exit for seconds.
static void* busy(void* arg) {
  (void)arg;
  for (;;) {
    char* volatile p = malloc(16 + g_spins % 512);
    p[0] = 1;
    free(p);
    ++g_spins;
  }
  return NULL;
}
static void* sleeper(void* arg) {
  (void)arg;
  free(malloc(16));
  for (;;) sleep(1000);
  return NULL;
}
static void* reader(void* arg) {
  (void)arg;
  free(malloc(16));
  char c;
  for (;;) (void)!read(g_pipe[0], &c, 1);
  return NULL;
}

int main(void) {
  if (pipe(g_pipe) != 0) return 1;
  pthread_t t;
  void* (*bodies[])(void*) = {busy, busy, sleeper, reader};
  for (int i = 0; i < 4; ++i)
    if (pthread_create(&t, NULL, bodies[i], NULL) != 0) return 1;
  for (int i = 0; i < kPairs; ++i) {
    char* volatile p = malloc(kSize);
    p[0] = 1;
    free(p);
  }
  for (int i = 0; i < kLeaks; ++i) g_leaked[i] = malloc(kLeakSize);
  for (int i = 0; i < kLeaks; ++i) g_leaked[i] = NULL;  // unreachable at exit
  usleep(500 * 1000);  // the busy thread fills the tracer's backlog
  printf("exiting with 4 threads running\n");
  return 0;
}
