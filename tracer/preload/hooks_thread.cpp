// pthread_getattr_np on the calling thread: glibc holds the thread's own
// lock while it allocates, so the recorder must not ask it again from
// inside those allocations (tracer/src/thread_stack.cpp). This interposer
// tells the recorder when a thread is inside, and hands it the answer.
#include <dlfcn.h>
#include <pthread.h>

#include <atomic>

#include "memtrail/detail/thread_registry.hpp"
#include "next_symbol.hpp"
#include "program_entry.hpp"

namespace {

using GetattrFn = int (*)(pthread_t, pthread_attr_t*);
std::atomic<GetattrFn> g_getattr{nullptr};

GetattrFn real_getattr() {
  return memtrail::preload::next_symbol(g_getattr, "pthread_getattr_np");
}

// Resolved before the program runs: a lazy dlsym would clear a dlerror()
// the program has not read yet.
[[gnu::constructor]] void resolve_thread_hooks() {
  real_getattr();
}

}  // namespace

extern "C" MEMTRAIL_PROGRAM_ENTRY int pthread_getattr_np(pthread_t thread, pthread_attr_t* attr) {
  GetattrFn fn = real_getattr();
  if (!pthread_equal(thread, pthread_self())) return fn(thread, attr);
  memtrail::detail::begin_own_stack_query();
  int rc = fn(thread, attr);
  memtrail::detail::end_own_stack_query(rc == 0 ? attr : nullptr);
  return rc;
}
