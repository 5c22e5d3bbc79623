// _Fork(): glibc's fork without the fork handlers (issue 26 item 2). The
// recorder's handlers still run around it, so the child abandons its
// parent's session (whose writer thread it does not have) and starts a
// trace of its own, as after fork(); the program's handlers stay unrun, as
// it asked. A fork by system call is caught by the recorder itself
// (abandon_if_foreign in tracer/src/process_hooks.cpp).
#include <dlfcn.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <csignal>

#include "memtrail/detail/reentrancy.hpp"
#include "memtrail/detail/runtime_hooks.hpp"
#include "next_symbol.hpp"
#include "preload_state.hpp"
#include "program_entry.hpp"

namespace {

using ForkFn = pid_t (*)();
std::atomic<ForkFn> g_fork{nullptr};

ForkFn real_fork() {
  return memtrail::preload::next_symbol(g_fork, "_Fork");
}

// Resolved before the program runs: a lazy dlsym would clear a dlerror()
// the program has not read yet.
[[gnu::constructor]] void resolve_fork_hook() {
  real_fork();
}

}  // namespace

extern "C" MEMTRAIL_PROGRAM_ENTRY pid_t _Fork() {
  ForkFn fn = real_fork();
  memtrail::detail::before_raw_fork();
  pid_t pid = fn != nullptr ? fn() : static_cast<pid_t>(syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0));
  if (pid == 0) {
    memtrail::preload::g_traced_pid = getpid();
    memtrail::detail::ScopedInternal internal;  // the child's start-up is not the program's
    memtrail::detail::after_raw_fork(true);
  } else {
    memtrail::detail::after_raw_fork(false);
  }
  return pid;
}
