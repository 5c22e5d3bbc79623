// unshare(2) of a user namespace (and the other flags the kernel grants
// only to a single-threaded process): the recorder's writer and heap-probe
// threads made every traced process multithreaded, so `unshare -r` and
// sandboxes failed with EINVAL (issue 26 item 5). They leave for the call
// and start again after it.
#include <dlfcn.h>
#include <sched.h>
#include <time.h>

#include <atomic>
#include <cerrno>

#include "memtrail/detail/reentrancy.hpp"
#include "memtrail/detail/runtime_hooks.hpp"

namespace {

using UnshareFn = int (*)(int);
std::atomic<UnshareFn> g_unshare{nullptr};

UnshareFn real_unshare() {
  UnshareFn fn = g_unshare.load(std::memory_order_acquire);
  if (__builtin_expect(fn == nullptr, 0)) {
    fn = reinterpret_cast<UnshareFn>(dlsym(RTLD_NEXT, "unshare"));
    g_unshare.store(fn, std::memory_order_release);
  }
  return fn;
}

// Resolved before the program runs: a lazy dlsym would clear a dlerror()
// the program has not read yet.
[[gnu::constructor]] void resolve_namespace_hooks() {
  real_unshare();
}

constexpr int kSingleThreadedOnly = CLONE_NEWUSER | CLONE_VM | CLONE_SIGHAND | CLONE_THREAD;

}  // namespace

extern "C" [[gnu::visibility("default")]] int unshare(int flags) {
  UnshareFn fn = real_unshare();
  if (fn == nullptr || !(flags & kSingleThreadedOnly)) return fn ? fn(flags) : (errno = ENOSYS, -1);
  bool paused;
  {
    memtrail::detail::ScopedInternal internal;
    paused = memtrail::detail::pause_threads();
  }
  int rc = fn(flags);
  // A thread just joined may count in the thread group a moment longer
  // (its tid is cleared before it is released): try again briefly. With
  // threads of the program's own the call fails as it would untraced.
  for (int i = 0; paused && rc != 0 && errno == EINVAL && i < 20; ++i) {
    timespec nap{0, 1'000'000};
    nanosleep(&nap, nullptr);
    rc = fn(flags);
  }
  int saved = errno;
  if (paused) {
    memtrail::detail::ScopedInternal internal;
    memtrail::detail::resume_threads();
  }
  errno = saved;
  return rc;
}
