/* What the C API costs a program that is not traced (issue 29: "outside
 * `memtrail run` they do nothing and cost nothing measurable"): the time
 * of N iterations of an empty loop, and of the same loop with an iteration
 * begin/end pair in it. Built twice (bench/CMakeLists.txt):
 *
 *   c_api_untraced_dl      memtrail_dl_iteration_begin/end: the header-only
 *                          shims, libmemtrail not linked, so dlsym finds
 *                          nothing and each call is a load and a branch
 *   c_api_untraced_linked  memtrail_iteration_begin/end of a linked
 *                          libmemtrail.so, the process not traced
 *
 *   c_api_untraced_dl [N]  ->  "empty loop X ns/iter, with a pair Y ns/iter"
 *
 * Best of 5 rounds each, so a busy machine shows its quiet moments. */
#define _GNU_SOURCE
#ifndef MEMTRAIL_BENCH_LINKED
#define MEMTRAIL_C_API_DLSYM
#endif
#include <memtrail/c_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* The loop's own work, kept by the compiler: a volatile counter. */
static volatile unsigned long sink;

static double empty_loop(long n) {
  double t0 = now_ns();
  for (long i = 0; i < n; ++i) sink = sink + 1;
  return (now_ns() - t0) / (double)n;
}

static double loop_with_pair(long n) {
  double t0 = now_ns();
  for (long i = 0; i < n; ++i) {
#ifdef MEMTRAIL_BENCH_LINKED
    memtrail_iteration_begin("step");
    sink = sink + 1;
    memtrail_iteration_end("step");
#else
    memtrail_dl_iteration_begin("step");
    sink = sink + 1;
    memtrail_dl_iteration_end("step");
#endif
  }
  return (now_ns() - t0) / (double)n;
}

int main(int argc, char** argv) {
  long n = argc > 1 ? atol(argv[1]) : 20000000L;
  double best_empty = 1e30, best_pair = 1e30;
  for (int round = 0; round < 5; ++round) {
    double e = empty_loop(n), p = loop_with_pair(n);
    if (e < best_empty) best_empty = e;
    if (p < best_pair) best_pair = p;
  }
#ifdef MEMTRAIL_BENCH_LINKED
  int traced = memtrail_tracing();
#else
  int traced = memtrail_dl_tracing();
#endif
  printf("%s: empty loop %.2f ns/iter, with a begin/end pair %.2f ns/iter (+%.2f ns)\n",
         traced ? "traced" : "untraced", best_empty, best_pair, best_pair - best_empty);
  return 0;
}
