// prctl(PR_SET_SECCOMP): a filter (or strict mode) may forbid the system
// calls the tracer makes on the program's threads, and a forbidden one
// kills the process (libunwind's rt_sigprocmask: SIGSYS, issue 26 item 5).
// Tracing stops, finished and said so, before the filter is installed
// (stop_before_seccomp). Both ways in: prctl(PR_SET_SECCOMP) and
// syscall(SYS_seccomp) (libseccomp); not a raw system call instruction.
#include <dlfcn.h>
#include <linux/prctl.h>
#include <linux/seccomp.h>
#include <sys/syscall.h>

#include <atomic>
#include <cerrno>
#include <cstdarg>

#include "memtrail/detail/runtime_hooks.hpp"
#include "next_symbol.hpp"
#include "program_entry.hpp"

namespace {

using PrctlFn = int (*)(int, unsigned long, unsigned long, unsigned long, unsigned long);
std::atomic<PrctlFn> g_prctl{nullptr};

PrctlFn real_prctl() {
  return memtrail::preload::next_symbol(g_prctl, "prctl");
}

// Resolved before the program runs: a lazy dlsym would clear a dlerror()
// the program has not read yet.
[[gnu::constructor]] void resolve_prctl_hook() {
  real_prctl();
}

}  // namespace

extern "C" MEMTRAIL_PROGRAM_ENTRY int prctl(int option, ...) {
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

// syscall(SYS_seccomp, ...): how libseccomp installs its filters. Every
// other number is passed through untouched (the recorder's own futex and
// gettid calls come through here too: one compare).
namespace {

using SyscallFn = long (*)(long, long, long, long, long, long, long);
std::atomic<SyscallFn> g_syscall{nullptr};

SyscallFn real_syscall() {
  return memtrail::preload::next_symbol(g_syscall, "syscall");
}

[[gnu::constructor]] void resolve_syscall_hook() {
  real_syscall();
}

}  // namespace

extern "C" MEMTRAIL_PROGRAM_ENTRY long syscall(long number, ...) {
  va_list args;
  va_start(args, number);
  long a[6];
  for (long& arg : a) arg = va_arg(args, long);
  va_end(args);
  if (__builtin_expect(number == SYS_seccomp, 0) &&
      (a[0] == SECCOMP_SET_MODE_STRICT || a[0] == SECCOMP_SET_MODE_FILTER)) {
    int saved = errno;
    memtrail::detail::stop_before_seccomp();
    errno = saved;
  }
  SyscallFn fn = real_syscall();
  if (__builtin_expect(fn == nullptr, 0)) {
    errno = ENOSYS;
    return -1;
  }
  return fn(number, a[0], a[1], a[2], a[3], a[4], a[5]);
}
