// Who drains the program threads' events: the writer thread, or the program
// threads themselves.
//
// On a machine with cores to spare the writer thread drains while the
// program runs: the two work in parallel. When the program's busy threads
// alone fill every core, the writer is one thread too many: the scheduler
// gives each of three busy threads two thirds of two cores, the writer falls
// behind, and program threads short of blocks sleep until it catches up,
// leaving a core idle (a sixth of the cpu on two cores, measured). Then the
// writer stands aside (writer_main) and a program thread that takes a block
// with a backlog drains a pass itself (next_block in recorder.cpp): the work
// is the same, done on a core that would otherwise sit idle or preempt.
#include <pthread.h>
#include <signal.h>

#include <cstring>

#include "memtrail/detail/environment.hpp"
#include "runtime.hpp"

namespace memtrail::runtime {

__thread bool t_draining __attribute__((tls_model("initial-exec"))) = false;

namespace {

// A thread that took a block or drained this recently counts as busy; a
// thread allocating flat out takes a block every few hundred microseconds.
constexpr std::uint64_t kBusyWindowNs = 5'000'000;

// A drain leaves block addresses in the stack below the program's frames,
// where later frames may keep them unwritten and the exit leak scan, which
// reads stacks conservatively, would take them for pointers. A pass uses
// about 4 KiB of stack (measured, chunk compression included): clear that.
constexpr std::size_t kDrainStackBytes = 4096;
__attribute__((noinline)) void clear_drain_stack() {
  unsigned char used[kDrainStackBytes];
  explicit_bzero(used, sizeof used);
  asm volatile("" : : "r"(used) : "memory");
}

// The signals held while a program thread drains. One of them landing inside
// the pass would find this thread holding the lock the writer needs to
// finish the trace, and the trace would end at its last flush; held, it is
// taken once the pass is over (on this thread, or on another at once), and
// its handler finishes the trace. SIGPIPE stays open: a write of the pass
// raises it on this thread, and held it would reach the program after.
// Faults cannot wait: one inside the pass still ends the trace unfinished.
sigset_t signals_held_while_draining() {
  sigset_t set = writer_blocked_signals();
  sigdelset(&set, SIGPIPE);
  return set;
}

}  // namespace

void drain_before_fork(Session& s) {
  if (!s.track_live.load(std::memory_order_acquire) || !s.options.follow_forks ||
      s.failed.load(std::memory_order_relaxed) || s.exit_requested.load(std::memory_order_acquire))
    return;
  ++t_internal;  // the drain's own allocations are not the program's
  t_draining = true;
  try {
    while (s.drain()) {
    }
  } catch (const std::exception& e) {
    s.stop_tracing(e);
  }
  t_draining = false;
  --t_internal;
  clear_drain_stack();
}

int Session::count_busy_producers() {
  std::uint64_t now = clock.raw_now();
  std::uint64_t window = clock.raw_span(kBusyWindowNs);
  std::uint64_t since = now > window ? now - window : 0;
  int busy = 0;
  for (auto* tb = registry.load(std::memory_order_acquire); tb; tb = tb->next)
    busy += !tb->retired && !tb->exited.load(std::memory_order_relaxed) &&
            tb->active_tick.load(std::memory_order_relaxed) >= since;
  busy_producers.store(busy, std::memory_order_relaxed);
  return busy;
}

bool Session::drain_here() {
  // Held from before the lock is taken until after it is released: a held
  // signal is taken at the unmask, when the writer can finish the trace.
  static const sigset_t held = signals_held_while_draining();
  sigset_t mask_before;
  pthread_sigmask(SIG_BLOCK, &held, &mask_before);
  bool drained = drain_pass_here();
  pthread_sigmask(SIG_SETMASK, &mask_before, nullptr);
  if (!drained) return false;
  clear_drain_stack();
  if (ThreadBuffer* tb = t_buffer)
    tb->active_tick.store(clock.raw_now(), std::memory_order_relaxed);
  program_thread_drains.fetch_add(1, std::memory_order_relaxed);
  return true;
}

bool Session::drain_pass_here() {
  if (!work_mutex.try_lock()) return false;
  std::lock_guard work(work_mutex, std::adopt_lock);
  // After the exit pass the writer is gone; after a failure nothing drains.
  if (failed.load(std::memory_order_relaxed) || exit_requested.load(std::memory_order_acquire))
    return false;
  t_draining = true;
  // The pass may write a chunk, and write() is a cancellation point: a
  // pending cancel of this thread must not unwind a half-done pass.
  int cancel_state;
  pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel_state);
  try {
    // Program threads drain only while the backlog grows: the pass is
    // behind, as the writer's capped passes, so it skips the address model.
    if (address_model == detail::AddressModel::automatic) writer->set_address_model(false);
    drain();
    count_busy_producers();
  } catch (const std::exception& e) {
    stop_tracing(e);
  }
  pthread_setcancelstate(cancel_state, nullptr);
  t_draining = false;
  return true;
}

}  // namespace memtrail::runtime
