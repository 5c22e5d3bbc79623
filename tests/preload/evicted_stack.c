// Frees made by a thread after the recorder's thread-exit notice: a detached
// thread that ends evicts an older cached stack from glibc's stack cache
// (40 MiB: a 36 MiB joined stack plus its own 8 MiB) and frees that stack's
// DTV; the program's own thread-specific data (a key created after the
// recorder's, so its destructor runs after the notice) is freed there too.
// Valgrind and LSan: 1 direct leak of 2000 bytes, nothing else.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static pthread_key_t g_key;
static atomic_long g_detached_tid;

static void* joined(void* arg) {
  (void)arg;
  return NULL;
}

static void* detached(void* arg) {
  (void)arg;
  pthread_setspecific(g_key, malloc(777));
  char* leak = malloc(2000);
  memset(leak, 3, 2000);
  atomic_store(&g_detached_tid, syscall(SYS_gettid));
  return NULL;
}

// True once the thread's /proc entry is gone: it has run its whole exit path.
static int thread_gone(long tid) {
  char path[64];
  snprintf(path, sizeof path, "/proc/self/task/%ld", tid);
  return access(path, F_OK) != 0;
}

int main(void) {
  pthread_key_create(&g_key, free);
  pthread_attr_t big;
  pthread_attr_init(&big);
  pthread_attr_setstacksize(&big, 36u << 20);
  pthread_t t;
  pthread_create(&t, &big, joined, NULL);
  pthread_join(t, NULL);  // its 36 MiB stack (and DTV) now wait in the cache
  pthread_attr_destroy(&big);
  pthread_create(&t, NULL, detached, NULL);
  pthread_detach(t);
  long tid;
  while ((tid = atomic_load(&g_detached_tid)) == 0) sched_yield();
  while (!thread_gone(tid)) sched_yield();
  return 0;
}
