// An alternate signal stack for each thread the recorder sees (issue 26,
// item 8): the fatal-signal handler (process_hooks.cpp) asks for SA_ONSTACK
// so that a stack overflow, whose SIGSEGV finds no room on the thread's own
// stack, can still finish the trace. Without an alternate stack the kernel
// cannot deliver that SIGSEGV at all and kills the process before a byte of
// the trace's end is written.
//
// The program must not notice: sigaltstack() (the preload's interposer
// calls program_sigaltstack) reports the program's own setting, SS_DISABLE
// while ours is the one installed, and a stack the program sets replaces
// ours as it would the default. The stack is mapped directly (raw system
// calls: no interposer, no malloc), so the program's heap figures do not
// move; untouched, its pages cost no memory.
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>

#include "memtrail/detail/own_mappings.hpp"
#include "memtrail/detail/signals.hpp"
#include "signal_stack.hpp"

namespace memtrail::runtime {
namespace {

// Room for the recorder's handler and, should the program install an
// SA_ONSTACK handler without a stack of its own, for that handler too.
// Measured (the stack filled with a pattern, the high-water mark read at
// the end of the fatal-signal handler): 6.6 KiB after a SIGSEGV, an abort,
// a SIGTERM on a thread with 4096 live blocks, and a stack overflow. 64 KiB
// leaves room for a large signal frame (AVX-512 or AMX state) and a
// program's handler. Untouched pages cost no memory either way, but every
// live thread holds the mapping's address space (ulimit -v: 10,000 threads
// held 2.6 GB of it at 256 KiB).
constexpr std::size_t kStackBytes = 64 * 1024;
constexpr std::size_t kGuardBytes = 4096;  // below the stack: an overflow faults

// This thread's mapping (guard included); null when the recorder gave none.
__thread void* t_mapping __attribute__((tls_model("initial-exec"))) = nullptr;
// The program called sigaltstack() with a new setting on this thread: the
// kernel's setting is the program's from then on.
__thread bool t_program_owns __attribute__((tls_model("initial-exec"))) = false;

int raw_sigaltstack(const stack_t* ss, stack_t* old) {
  return static_cast<int>(::syscall(SYS_sigaltstack, ss, old));
}

void* raw_map(std::size_t bytes) {
  long p = ::syscall(SYS_mmap, nullptr, bytes, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p < 0 && p > -4096) return nullptr;
  detail::note_own_mapped(reinterpret_cast<void*>(p), bytes, detail::OwnPurpose::thread_state);
  return reinterpret_cast<void*>(p);
}

void unmap(void* mapping) {
  detail::note_own_unmapped(mapping, kGuardBytes + kStackBytes);
  ::syscall(SYS_munmap, mapping, kGuardBytes + kStackBytes);
}

bool ours_installed() {
  return t_mapping != nullptr && !t_program_owns;
}

}  // namespace

void give_thread_signal_stack() {
  if (t_mapping || t_program_owns) return;  // a fork child keeps the parent thread's
  int saved_errno = errno;
  stack_t current;
  if (raw_sigaltstack(nullptr, &current) != 0 || !(current.ss_flags & SS_DISABLE)) {
    t_program_owns = true;  // set before our first look: the program's (or its runtime's)
    errno = saved_errno;
    return;
  }
  void* mapping = raw_map(kGuardBytes + kStackBytes);
  if (!mapping) {  // an address-space limit: the thread goes without, as before
    errno = saved_errno;
    return;
  }
  ::syscall(SYS_mprotect, mapping, kGuardBytes, PROT_NONE);
  stack_t ss{};
  ss.ss_sp = static_cast<char*>(mapping) + kGuardBytes;
  ss.ss_size = kStackBytes;
  if (raw_sigaltstack(&ss, nullptr) == 0)
    t_mapping = mapping;
  else
    unmap(mapping);
  errno = saved_errno;
}

void release_thread_signal_stack() {
  if (!t_mapping) return;
  if (!t_program_owns) {
    stack_t off{};
    off.ss_flags = SS_DISABLE;
    if (raw_sigaltstack(&off, nullptr) != 0) return;  // running on it: keep it mapped
  }
  unmap(t_mapping);
  t_mapping = nullptr;
}

}  // namespace memtrail::runtime

namespace memtrail::detail {

int program_sigaltstack(const stack_t* ss, stack_t* old) noexcept {
  if (!runtime::ours_installed()) {
    int r = runtime::raw_sigaltstack(ss, old);
    if (r == 0 && ss) runtime::t_program_owns = true;
    return r;
  }
  stack_t kernel_old;
  int r = runtime::raw_sigaltstack(ss, &kernel_old);
  if (r != 0) return r;
  if (ss) runtime::t_program_owns = true;  // ours stays mapped until the thread ends
  if (old) {
    *old = stack_t{};  // what a thread without one reports
    old->ss_flags = SS_DISABLE;
  }
  return 0;
}

}  // namespace memtrail::detail
