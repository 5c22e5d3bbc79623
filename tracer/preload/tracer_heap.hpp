// Which heap serves a call that reaches the interposers: the tracer's own
// (memtrail/detail/own_heap.hpp) when the calling thread is inside the
// tracer, the program's (the next allocator) otherwise; and which one a
// block goes back to, by its address. One thread-local load per call, one
// range check per free.
#pragma once

#include "memtrail/detail/own_heap.hpp"

namespace memtrail::runtime {
// recorder.cpp: the reentrancy depth (> 0 inside the tracer and on its
// threads) and the thread-exit notice (after it, t_internal stays 1 only
// to drop the thread's events: its calls are the program's again).
extern __thread int t_internal __attribute__((tls_model("initial-exec")));
extern __thread bool t_exited __attribute__((tls_model("initial-exec")));
// recorder.cpp: set while record_impl appends to the thread's buffer (and
// while a program thread drains for the writer): with t_internal at 1 and
// not draining, a call arriving then comes from a signal handler that
// interrupted the recorder; it is the program's, and its event is queued.
extern __thread bool t_appending __attribute__((tls_model("initial-exec")));
extern __thread bool t_draining __attribute__((tls_model("initial-exec")));
}  // namespace memtrail::runtime

namespace memtrail::preload {

// Set once the own modules are routed (not under `memtrail attach`: its
// detach points the slots back at the program's allocator, which must then
// never be handed an own-heap block).
extern bool g_own_heap_routed;

// A signal handler's call that interrupted the recorder mid-append (see
// t_appending): the program's, though t_internal is set.
[[gnu::always_inline]] inline bool handler_interrupted_recorder() {
  return runtime::t_appending && runtime::t_internal == 1 && !runtime::t_draining;
}

[[gnu::always_inline]] inline bool tracer_is_calling() {
  return __builtin_expect(runtime::t_internal > 0 && !runtime::t_exited, 0) && g_own_heap_routed &&
         !handler_interrupted_recorder();
}

// Routes the tracer's own modules' allocation calls (libmemtrail.so, this
// library, and the libraries only they need: libstdc++ in a C program, zstd,
// libunwind, ...) to our interposers, whatever the program defines: an
// executable's own malloc wins symbol lookup over any preload, and those
// calls would land in its heap (got_patch.cpp). Once, at start-up.
int route_own_modules_to_interposers();

}  // namespace memtrail::preload
