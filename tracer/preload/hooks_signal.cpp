// sigaction() and signal(): the program sees and sets the dispositions it
// would have without the tracer (process_hooks.cpp keeps the recorder's
// fatal-signal handler where the program has SIG_DFL). Without this a program
// that asks first would find a handler where it expects SIG_DFL: Python then
// never installs its KeyboardInterrupt handler for SIGINT.
// glibc's signal(), bsd_signal() and sysv_signal() call its sigaction
// internally, not through the PLT, so each needs its own interposer.
#include <signal.h>

#include <cerrno>

#include "memtrail/detail/signals.hpp"
#include "program_entry.hpp"

namespace {

sighandler_t set_handler(int sig, sighandler_t handler, int flags, bool mask_itself) {
  if (handler == SIG_ERR || sig <= 0 || sig >= NSIG) {
    errno = EINVAL;
    return SIG_ERR;
  }
  struct sigaction act = {}, old = {};
  act.sa_handler = handler;
  act.sa_flags = flags;
  sigemptyset(&act.sa_mask);
  if (mask_itself) sigaddset(&act.sa_mask, sig);
  if (memtrail::detail::program_sigaction(sig, &act, &old) != 0) return SIG_ERR;
  return old.sa_handler;
}

}  // namespace

extern "C" {

MEMTRAIL_PROGRAM_ENTRY int sigaction(int sig, const struct sigaction* act,
                                     struct sigaction* old) noexcept {
  return memtrail::detail::program_sigaction(sig, act, old);
}

// BSD semantics, as glibc's signal(): restartable, the signal masked in its
// handler. (siginterrupt() is not honoured here.)
// The program's own alternate stack setting, not the recorder's
// (signal_stack.cpp).
MEMTRAIL_PROGRAM_ENTRY int sigaltstack(const stack_t* ss, stack_t* old) noexcept {
  return memtrail::detail::program_sigaltstack(ss, old);
}

MEMTRAIL_PROGRAM_ENTRY sighandler_t signal(int sig, sighandler_t handler) noexcept {
  return set_handler(sig, handler, SA_RESTART, true);
}

MEMTRAIL_PROGRAM_ENTRY sighandler_t bsd_signal(int sig, sighandler_t handler) noexcept {
  return set_handler(sig, handler, SA_RESTART, true);
}

// System V semantics: reset to SIG_DFL on delivery, not masked.
MEMTRAIL_PROGRAM_ENTRY sighandler_t sysv_signal(int sig, sighandler_t handler) noexcept {
  return set_handler(sig, handler, SA_RESETHAND | SA_NODEFER, false);
}

}  // extern "C"
