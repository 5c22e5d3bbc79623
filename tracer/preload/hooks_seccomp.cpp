// prctl(PR_SET_SECCOMP): a filter (or strict mode) may forbid the system
// calls the tracer makes on the program's threads, and a forbidden one
// kills the process (libunwind's rt_sigprocmask: SIGSYS, issue 26 item 5).
// Tracing stops, finished and said so, before the filter is installed
// (stop_before_seccomp). Not caught: a filter installed by syscall(2)
// directly (SYS_seccomp).
#include <dlfcn.h>
#include <linux/prctl.h>

#include <atomic>
#include <cerrno>
#include <cstdarg>

#include "memtrail/detail/runtime_hooks.hpp"

namespace {

using PrctlFn = int (*)(int, unsigned long, unsigned long, unsigned long, unsigned long);
std::atomic<PrctlFn> g_prctl{nullptr};

PrctlFn real_prctl() {
  PrctlFn fn = g_prctl.load(std::memory_order_acquire);
  if (__builtin_expect(fn == nullptr, 0)) {
    fn = reinterpret_cast<PrctlFn>(dlsym(RTLD_NEXT, "prctl"));
    g_prctl.store(fn, std::memory_order_release);
  }
  return fn;
}

// Resolved before the program runs: a lazy dlsym would clear a dlerror()
// the program has not read yet.
[[gnu::constructor]] void resolve_prctl_hook() {
  real_prctl();
}

}  // namespace

extern "C" [[gnu::visibility("default")]] int prctl(int option, ...) {
  va_list args;
  va_start(args, option);
  unsigned long a2 = va_arg(args, unsigned long), a3 = va_arg(args, unsigned long),
                a4 = va_arg(args, unsigned long), a5 = va_arg(args, unsigned long);
  va_end(args);
  if (option == PR_SET_SECCOMP) {
    int saved = errno;
    memtrail::detail::stop_before_seccomp();
    errno = saved;
  }
  PrctlFn fn = real_prctl();
  if (fn == nullptr) {
    errno = ENOSYS;
    return -1;
  }
  return fn(option, a2, a3, a4, a5);
}
