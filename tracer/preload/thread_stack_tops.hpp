// Where each other live thread's stack is in use, for the exit-time leak
// scan. Scanning a thread's whole stack mapping would read stale words below
// its stack pointer: glibc hands the stack of a joined thread to the next
// thread it creates, so an address left there by a thread that leaked a block
// would hide that leak. Each thread is signalled once; its handler copies the
// interrupted registers (a pointer held only in a register is a root) and
// stack pointer, then returns at once: it takes no lock and allocates
// nothing, so a thread stopped inside malloc or the recorder cannot block
// the scan. Threads keep running afterwards, as before.
#pragma once

#include <cstdint>
#include <vector>

namespace memtrail::preload {

struct ThreadStackTop {
  std::uint64_t tid = 0;
  bool answered = false;  // false: signal blocked, thread gone, or no free signal
  std::uintptr_t sp = 0;  // interrupted stack pointer (red zone not included)
  std::uintptr_t regs_begin = 0, regs_end = 0;  // copy of its general registers
};

// Signals every tid (never the caller's) and waits up to `timeout_ms` for the
// answers. The register copies live in static storage until the next call.
std::vector<ThreadStackTop> collect_thread_stack_tops(const std::vector<std::uint64_t>& tids,
                                                      int timeout_ms);

}  // namespace memtrail::preload
