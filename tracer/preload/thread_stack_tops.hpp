// Stops every other thread of the process for the exit-time leak scan, and
// says where each one's stack is in use and what its registers hold.
//
// Every thread listed in /proc/self/task (not only those that recorded an
// event: a thread that never allocated can hold the only pointer to a block)
// is sent a real-time signal nobody handles. Its handler copies the
// interrupted general registers (a pointer held only in a register is a
// root), stack pointer and thread pointer, then waits on a futex until the
// scan ends: registers and stack are read from the same instant, as under
// Valgrind, whose threads do not run while it scans. Vector registers are not
// copied: Valgrind does not scan them either (LeakSanitizer does).
//
// A thread interrupted inside the real allocator (which may hold one of its
// locks, that the scan's own allocations would then wait for) is not held
// there: the signal is deferred to the allocator's return
// (memtrail/detail/signals.hpp), where it is raised again and the thread
// stops. A thread interrupted inside the recorder (its drain and table
// locks) lets the signal go and is signalled again a millisecond later. The
// recorder's own threads answer and go on running: the scan needs the writer
// to drain the stopped threads' last events.
//
// Scanning a thread's whole stack mapping would read stale words below its
// stack pointer (glibc hands the stack of a joined thread to the next thread
// it creates), so the scan starts at the stack pointer each thread had.
#pragma once

#include <cstdint>
#include <vector>

namespace memtrail::preload {

struct StoppedThread {
  std::uint64_t tid = 0;
  bool answered = false;              // false: signal blocked, thread gone, or no free signal
  std::uintptr_t sp = 0;              // interrupted stack pointer (red zone not included)
  std::uintptr_t thread_pointer = 0;  // its TCB / TLS anchor
  std::uintptr_t regs_begin = 0, regs_end = 0;  // copy of its general registers
};

// While alive, every other program thread that answered is held inside the
// signal handler. Construct it before reading anything the threads may change.
class WorldStop {
 public:
  // Signals every thread but the caller and waits up to `timeout_ms` for
  // them to stop (threads created meanwhile are signalled too).
  explicit WorldStop(int timeout_ms);
  ~WorldStop();  // releases the threads
  WorldStop(const WorldStop&) = delete;
  WorldStop& operator=(const WorldStop&) = delete;

  // The program's other threads (the recorder's are left out). The register
  // copies live in static storage until the next WorldStop.
  const std::vector<StoppedThread>& threads() const { return threads_; }
  void release();

 private:
  std::vector<StoppedThread> threads_;
  bool held_ = false;
};

}  // namespace memtrail::preload
