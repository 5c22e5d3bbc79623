// Where a registered thread's stack lies (ThreadBuffer::stack_low/high):
// the stack cache's walk limit and the exit leak scan's roots.
//
// pthread_getattr_np answers it, but glibc holds the target thread's own
// lock while it works, and it allocates meanwhile (fopen of /proc/self/maps
// for the main thread, a realloc of the cpuset for the others). When such
// an allocation is the thread's first event, asking again from inside it
// waits on that lock forever: Rust's runtime, every JVM thread and any
// program whose first call is pthread_getattr_np(pthread_self()) hung at
// start-up (issue 26 item 1). The preload's pthread_getattr_np interposer
// marks the call (begin/end_own_stack_query); a thread registered inside
// it takes its extent from the answer the program itself gets, once glibc
// has let go of the lock. No extra system call either way.
#include <pthread.h>

#include "memtrail/detail/thread_registry.hpp"
#include "runtime.hpp"

namespace memtrail::runtime {

// >0 while this thread is inside pthread_getattr_np on itself.
__thread int t_own_stack_query __attribute__((tls_model("initial-exec"))) = 0;

namespace {
void set_extent(ThreadBuffer* tb, const pthread_attr_t& attr) {
  void* addr = nullptr;
  std::size_t size = 0;
  if (pthread_attr_getstack(&attr, &addr, &size) != 0) return;
  tb->stack_low = reinterpret_cast<std::uintptr_t>(addr);
  tb->stack_high = tb->stack_low + size;
}
}  // namespace

void set_stack_extent(ThreadBuffer* tb, const pthread_attr_t& attr) {
  set_extent(tb, attr);
}

void learn_thread_stack(ThreadBuffer* tb) {
  if (t_own_stack_query > 0) return;  // end_own_stack_query fills it in
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) != 0) return;
  set_extent(tb, attr);
  pthread_attr_destroy(&attr);
}

}  // namespace memtrail::runtime

namespace memtrail::detail {

void begin_own_stack_query() noexcept {
  ++runtime::t_own_stack_query;
}

void end_own_stack_query(const pthread_attr_t* answer) noexcept {
  --runtime::t_own_stack_query;
  runtime::ThreadBuffer* tb = runtime::t_buffer;
  // Registered inside the call (its extent is still unknown): the lock is
  // free now, and the answer is the one pthread_getattr_np gives anyway.
  if (answer && tb && tb->stack_high == 0 && runtime::t_own_stack_query == 0)
    runtime::set_stack_extent(tb, *answer);
}

}  // namespace memtrail::detail
