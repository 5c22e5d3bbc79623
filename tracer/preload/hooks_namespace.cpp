// unshare(2) of a user namespace (and the other flags the kernel grants
// only to a single-threaded process), and setns(2) into one: the
// recorder's writer and heap-probe threads made every traced process
// multithreaded, so `unshare -r`, `nsenter -U` and sandboxes failed with
// EINVAL (issue 26 item 5). They leave for the call and start again after.
#include <dlfcn.h>
#include <sched.h>
#include <time.h>

#include <atomic>
#include <cerrno>

#include "memtrail/detail/reentrancy.hpp"
#include "memtrail/detail/runtime_hooks.hpp"
#include "next_symbol.hpp"
#include "program_entry.hpp"

namespace {

using UnshareFn = int (*)(int);
using SetnsFn = int (*)(int, int);
std::atomic<UnshareFn> g_unshare{nullptr};
std::atomic<SetnsFn> g_setns{nullptr};

UnshareFn real_unshare() {
  return memtrail::preload::next_symbol(g_unshare, "unshare");
}

SetnsFn real_setns() {
  return memtrail::preload::next_symbol(g_setns, "setns");
}

// Resolved before the program runs: a lazy dlsym would clear a dlerror()
// the program has not read yet.
[[gnu::constructor]] void resolve_namespace_hooks() {
  real_unshare();
  real_setns();
}

constexpr int kSingleThreadedOnly = CLONE_NEWUSER | CLONE_VM | CLONE_SIGHAND | CLONE_THREAD;

// `call` with the recorder's threads gone (when there were any), retried
// briefly on EINVAL: a thread just joined may count in the thread group a
// moment longer (its tid is cleared before it is released). With threads
// of the program's own the call fails as it would untraced.
template <typename Call>
int single_threaded(Call call) {
  bool paused;
  {
    memtrail::detail::ScopedInternal internal;
    paused = memtrail::detail::pause_threads();
  }
  int rc = call();
  for (int i = 0; paused && rc != 0 && errno == EINVAL && i < 20; ++i) {
    timespec nap{0, 1'000'000};
    nanosleep(&nap, nullptr);
    rc = call();
  }
  int saved = errno;
  if (paused) {
    memtrail::detail::ScopedInternal internal;
    memtrail::detail::resume_threads();
  }
  errno = saved;
  return rc;
}

}  // namespace

extern "C" MEMTRAIL_PROGRAM_ENTRY int unshare(int flags) {
  UnshareFn fn = real_unshare();
  if (fn == nullptr) {
    errno = ENOSYS;
    return -1;
  }
  if (!(flags & kSingleThreadedOnly)) return fn(flags);
  return single_threaded([&] { return fn(flags); });
}

// nstype 0 accepts any namespace, a user namespace among them.
extern "C" MEMTRAIL_PROGRAM_ENTRY int setns(int fd, int nstype) {
  SetnsFn fn = real_setns();
  if (fn == nullptr) {
    errno = ENOSYS;
    return -1;
  }
  if (nstype != 0 && nstype != CLONE_NEWUSER) return fn(fd, nstype);
  return single_threaded([&] { return fn(fd, nstype); });
}
