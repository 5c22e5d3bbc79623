/* The tracer's memory per program thread (issue 26 item 6, issue 28's
 * tracer-memory target). Two shapes:
 *   many_threads idle N    N threads that each make one malloc, then wait
 *                          together: the figures are taken while all of them
 *                          live (the peak a thread pool holds).
 *   many_threads churn N   N threads started and joined 16 at a time, each
 *                          making one malloc: what an exited thread leaves.
 * With GUEST_OBSERVE set, guest_observe() prints the parity figures (RSS
 * included) at that moment, and "observe maps M" follows (M = lines of
 * /proc/self/maps). With MANY_THREADS_REPORT set, one more line on
 * stderr: "threads N rss_kib R pss_kib P maps M" (Pss from
 * /proc/self/smaps_rollup, M = lines of /proc/self/maps), for measuring. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guest_observables.h"

static pthread_barrier_t g_allocated, g_measured;

/* The one malloc each thread makes; kept until the thread ends. Published
 * through a volatile pointer, so the compiler cannot drop the pair. */
static void* volatile g_last_block;

static void* allocate_once(void) {
  char* p = malloc(64);
  if (p) p[0] = 1;
  g_last_block = p;
  return p;
}

static void* idle_worker(void* arg) {
  (void)arg;
  void* p = allocate_once();
  pthread_barrier_wait(&g_allocated);
  pthread_barrier_wait(&g_measured);
  free(p);
  return NULL;
}

static void* short_worker(void* arg) {
  (void)arg;
  free(allocate_once());
  return NULL;
}

static long field_kib(const char* path, const char* field) {
  FILE* f = fopen(path, "r");
  if (!f) return -1;
  char line[256];
  long value = -1;
  size_t n = strlen(field);
  while (fgets(line, sizeof line, f))
    if (strncmp(line, field, n) == 0) {
      value = strtol(line + n, NULL, 10);
      break;
    }
  fclose(f);
  return value;
}

static long count_maps(void) {
  FILE* f = fopen("/proc/self/maps", "r");
  if (!f) return -1;
  long n = 0;
  int c;
  while ((c = fgetc(f)) != EOF) n += c == '\n';
  fclose(f);
  return n;
}

/* The parity figures first (they must not see the report's stdio). */
static void measure(int threads) {
  guest_observe();
  if (getenv("GUEST_OBSERVE") != NULL) printf("observe maps %ld\n", count_maps());
  if (getenv("MANY_THREADS_REPORT") == NULL) return;
  long rss = field_kib("/proc/self/status", "VmRSS:");
  long pss = field_kib("/proc/self/smaps_rollup", "Pss:");
  fprintf(stderr, "threads %d rss_kib %ld pss_kib %ld maps %ld\n", threads, rss, pss, count_maps());
  const char* copy = getenv("MANY_THREADS_SMAPS"); /* a copy of smaps, to read per mapping */
  FILE* in = copy ? fopen("/proc/self/smaps", "r") : NULL;
  FILE* out = in ? fopen(copy, "w") : NULL;
  for (int c; out && (c = fgetc(in)) != EOF;) fputc(c, out);
  if (out) fclose(out);
  if (in) fclose(in);
}

static int run_idle(int n) {
  pthread_t* t = calloc((size_t)n, sizeof *t);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 64 * 1024);
  pthread_barrier_init(&g_allocated, NULL, (unsigned)n + 1);
  pthread_barrier_init(&g_measured, NULL, (unsigned)n + 1);
  for (int i = 0; i < n; i++)
    if (pthread_create(&t[i], &attr, idle_worker, NULL) != 0) return 1;
  pthread_barrier_wait(&g_allocated);
  measure(n);
  pthread_barrier_wait(&g_measured);
  for (int i = 0; i < n; i++) pthread_join(t[i], NULL);
  free(t);
  printf("%d idle threads done\n", n);
  return 0;
}

static int run_churn(int n) {
  enum { kBatch = 16 };
  pthread_t t[kBatch];
  for (int done = 0; done < n; done += kBatch) {
    int batch = n - done < kBatch ? n - done : kBatch;
    for (int i = 0; i < batch; i++)
      if (pthread_create(&t[i], NULL, short_worker, NULL) != 0) return 1;
    for (int i = 0; i < batch; i++) pthread_join(t[i], NULL);
  }
  printf("%d threads started and joined\n", n);
  measure(n);
  return 0;
}

int main(int argc, char** argv) {
  int n = argc > 2 ? atoi(argv[2]) : 0;
  if (argc > 2 && n > 0 && strcmp(argv[1], "idle") == 0) return run_idle(n);
  if (argc > 2 && n > 0 && strcmp(argv[1], "churn") == 0) return run_churn(n);
  fprintf(stderr, "usage: many_threads idle|churn N\n");
  return 2;
}
