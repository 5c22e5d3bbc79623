/* memtrail's C API: marks, scopes, loop iterations and a pause switch, for
 * programs in any language (C, Python through ctypes, anything with a C
 * FFI). Stable: these names and signatures never change meaning; new calls
 * are added, with memtrail_api_version() going up.
 *
 * Every call is a no-op when the process is not being traced, and costs
 * one branch then. All calls are thread-safe; none may be called from a
 * signal handler.
 *
 * Two ways to call them:
 *
 *  1. Link libmemtrail (`target_link_libraries(app memtrail::memtrail)`) and
 *     call memtrail_mark() and friends. The program then needs libmemtrail.so
 *     to start, traced or not.
 *
 *  2. Call memtrail_dl_mark() and friends below (define MEMTRAIL_C_API_DLSYM
 *     before including this header in the one file, or in every file, that
 *     uses them). They look the function up in the process with
 *     dlsym(RTLD_DEFAULT, ...) on first use: under `memtrail run` (whose
 *     preload library brings libmemtrail.so into the process) they reach the
 *     recorder; elsewhere they find nothing and do nothing. The program does
 *     not link libmemtrail and runs anywhere.
 *
 *   memtrail_iteration_begin("step");      // each step of a training loop
 *   ...
 *   memtrail_iteration_end("step");
 *   // memtrail check --iteration-mark step --max-scope-growth 0 run.mtr
 */
#ifndef MEMTRAIL_C_API_H
#define MEMTRAIL_C_API_H

#ifdef __cplusplus
extern "C" {
#endif

/* 1 for the calls below. */
int memtrail_api_version(void);

/* Nonzero while this process is being traced. */
int memtrail_tracing(void);

/* A `mark` event with TEXT (any UTF-8 text, copied): `report --from-mark`,
 * `--to-mark`, `--iteration-mark TEXT` and the GUI's timeline use them. */
void memtrail_mark(const char* text);

/* A named scope, begun and ended on the same thread (they nest): reported
 * with the bytes its entries left live and its growth per entry. Scopes of
 * the same NAME are one scope. */
void memtrail_scope_begin(const char* name);
void memtrail_scope_end(const char* name);

/* One iteration of the loop LOOP: begin records a mark LOOP (so
 * `--iteration-mark LOOP` cuts the trace there), end closes the iteration
 * (the stretch until the next begin is then not counted as part of one).
 * `report` and `check` find such loops without --iteration-mark. */
void memtrail_iteration_begin(const char* loop);
void memtrail_iteration_end(const char* loop);

/* Stops recording new blocks in the whole process until the matching
 * memtrail_resume() (they nest): allocations made meanwhile are not in the
 * trace, frees still are (so blocks allocated before stay right). For a
 * stretch that is known good and too busy to trace. Both are marks in the
 * trace. */
void memtrail_pause(void);
void memtrail_resume(void);

#ifdef __cplusplus
}
#endif

#ifdef MEMTRAIL_C_API_DLSYM
/* The calls above, reached without linking libmemtrail (see the top). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* RTLD_DEFAULT */
#endif
#include <dlfcn.h>

/* The address of NAME in the process, or 0; looked up once per call site's
 * static SLOT (a race looks it up twice and stores the same value). */
static inline void* memtrail_dl_lookup_(void** slot, int* looked, const char* name) {
  if (!__atomic_load_n(looked, __ATOMIC_ACQUIRE)) {
    __atomic_store_n(slot, dlsym(RTLD_DEFAULT, name), __ATOMIC_RELAXED);
    __atomic_store_n(looked, 1, __ATOMIC_RELEASE);
  }
  return __atomic_load_n(slot, __ATOMIC_RELAXED);
}

#define MEMTRAIL_DL_CALL_(name, type, ...)                                         \
  do {                                                                            \
    static void* memtrail_slot_;                                                  \
    static int memtrail_looked_;                                                  \
    void* memtrail_fn_ = memtrail_dl_lookup_(&memtrail_slot_, &memtrail_looked_, name); \
    if (memtrail_fn_) ((type)memtrail_fn_)(__VA_ARGS__);                          \
  } while (0)

static inline void memtrail_dl_mark(const char* text) {
  MEMTRAIL_DL_CALL_("memtrail_mark", void (*)(const char*), text);
}
static inline void memtrail_dl_scope_begin(const char* name) {
  MEMTRAIL_DL_CALL_("memtrail_scope_begin", void (*)(const char*), name);
}
static inline void memtrail_dl_scope_end(const char* name) {
  MEMTRAIL_DL_CALL_("memtrail_scope_end", void (*)(const char*), name);
}
static inline void memtrail_dl_iteration_begin(const char* loop) {
  MEMTRAIL_DL_CALL_("memtrail_iteration_begin", void (*)(const char*), loop);
}
static inline void memtrail_dl_iteration_end(const char* loop) {
  MEMTRAIL_DL_CALL_("memtrail_iteration_end", void (*)(const char*), loop);
}
static inline void memtrail_dl_pause(void) {
  MEMTRAIL_DL_CALL_("memtrail_pause", void (*)(void), );
}
static inline void memtrail_dl_resume(void) {
  MEMTRAIL_DL_CALL_("memtrail_resume", void (*)(void), );
}
static inline int memtrail_dl_tracing(void) {
  static void* slot;
  static int looked;
  void* fn = memtrail_dl_lookup_(&slot, &looked, "memtrail_tracing");
  return fn ? ((int (*)(void))fn)() : 0;
}
#endif /* MEMTRAIL_C_API_DLSYM */

#endif /* MEMTRAIL_C_API_H */
