// Process-level hooks of the recorder: flush at exit, on fatal signals
// (finish the trace, then die of the same signal), thread-exit notices, and
// fork (the child starts its own trace file).
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "memtrail/detail/diagnostics.hpp"
#include "memtrail/detail/own_heap.hpp"
#include "memtrail/detail/runtime_hooks.hpp"
#include "memtrail/detail/signals.hpp"
#include "runtime.hpp"
#include "signal_stack.hpp"

// glibc's sigaction itself: `sigaction` is the preload's interposer.
extern "C" int __sigaction(int sig, const struct sigaction* act, struct sigaction* old);

extern "C" int __cxa_thread_atexit_impl(void (*fn)(void*), void* arg, void* dso_symbol);
extern "C" void* __dso_handle;

namespace memtrail::runtime {

namespace {

std::atomic<void (*)()> g_exit_hook{nullptr};

void on_thread_exit(void* p) {
  auto* tb = static_cast<ThreadBuffer*>(p);
  // Nothing this thread does from here on is recorded, so the writer may
  // recycle its blocks once it has seen `exited`.
  t_internal = 1;
  t_exited = true;
  t_buffer = nullptr;
  tb->exited.store(true, std::memory_order_release);
  tb->session->live_threads.fetch_sub(1, std::memory_order_relaxed);
  tb->session->tally.give_back(tb->tally_slot);  // its count stays in the slot
  release_thread_signal_stack();
}

// ---- fatal signals ----------------------------------------------------------
//
// Signals whose default action ends the process. The recorder's handler is
// installed only where the program's disposition is SIG_DFL (at start, and
// whenever the program sets SIG_DFL again through the preload's sigaction /
// signal interposers), so running it always means "the process dies now":
// it finishes the trace with the signal recorded, restores SIG_DFL and
// re-raises, and the process ends exactly as it would untraced. A program's
// own handler or SIG_IGN replaces ours and behaves as without the recorder;
// the program always sees the disposition it set (SIG_DFL where ours is).
constexpr int kFatalSignals[] = {SIGHUP,  SIGINT,  SIGQUIT, SIGILL,  SIGABRT, SIGBUS,
                                 SIGFPE,  SIGSEGV, SIGPIPE, SIGALRM, SIGTERM, SIGUSR1,
                                 SIGUSR2, SIGXCPU, SIGXFSZ, SIGSYS};
constexpr int kSignalSlots = 32;
// Bound on the final drain inside a handler: the writer may wait for a lock
// the interrupted thread holds (malloc's, the side tables'); the trace then
// ends at its last flush rather than the process hanging.
constexpr int kFinishTimeoutMs = 3000;

bool g_managed[kSignalSlots];                   // in kFatalSignals
std::atomic<bool> g_ours[kSignalSlots];         // our handler is installed
struct sigaction g_program_view[kSignalSlots];  // what the program set (SIG_DFL) while ours
std::atomic<bool> g_signals_installed{false};

// 0: no fatal signal yet; 1: a handler is finishing the trace; 2: done.
std::atomic<int> g_fatal_state{0};
std::atomic<pthread_t> g_fatal_thread{};

bool is_default(const struct sigaction& a) {
  return !(a.sa_flags & SA_SIGINFO) && a.sa_handler == SIG_DFL;
}

void nap_until(const std::atomic<int>& state, int value, int timeout_ms) {
  timespec nap{0, 1'000'000};
  for (int waited = 0; waited < timeout_ms && state.load() != value; ++waited)
    ::nanosleep(&nap, nullptr);
}

// The first fatal signal finishes the trace; one arriving meanwhile on
// another thread waits for that (a SIGSEGV in two threads, a SIGTERM during
// an abort). A nested fault in this very handler just dies.
void finish_trace_on_signal(int sig) {
  int expected = 0;
  if (!g_fatal_state.compare_exchange_strong(expected, 1)) {
    if (!pthread_equal(g_fatal_thread.load(), pthread_self()))
      nap_until(g_fatal_state, 2, kFinishTimeoutMs);
    return;
  }
  g_fatal_thread.store(pthread_self());
  Session* s = g_session.load(std::memory_order_acquire);
  if (!s) s = g_stopping_session.load(std::memory_order_acquire);
  // A thread stopped inside its own drain holds the lock the writer needs,
  // and the writer cannot wait for itself: the trace then ends at its last
  // flush (SIGKILL's outcome).
  if (s && !t_draining && !pthread_equal(s->writer_thread.native_handle(), pthread_self()) &&
      (static_cast<int>(::getpid()) == s->pid || (s->fork_probe && *s->fork_probe != 0))) {
    ++t_internal;
    s->finish_on_signal(sig, kFinishTimeoutMs);
    --t_internal;
  }
  g_fatal_state.store(2);
}

// Sent from outside the thread, not caused by what it executes: these can
// wait until the real allocator returns (memtrail/detail/signals.hpp).
bool may_defer(int sig) {
  switch (sig) {
    case SIGHUP:
    case SIGINT:
    case SIGQUIT:
    case SIGPIPE:
    case SIGALRM:
    case SIGTERM:
    case SIGUSR1:
    case SIGUSR2:
    case SIGXCPU:
      return true;
    default:
      return false;
  }
}

void on_fatal_signal(int sig, siginfo_t*, void*) {
  if (detail::t_in_real_allocator && may_defer(sig)) {
    detail::t_deferred_signal = sig;
    return;
  }
  int saved_errno = errno;
  finish_trace_on_signal(sig);
  struct sigaction dfl;
  std::memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  __sigaction(sig, &dfl, nullptr);
  g_ours[sig].store(false);
  errno = saved_errno;
  // Pending until this handler returns, then delivered with SIG_DFL (a
  // fault re-executes its instruction and faults again the same way).
  raise(sig);
}

struct sigaction our_action() {
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_fatal_signal;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  return sa;
}

void install_signal_handlers() {
  struct sigaction ours = our_action();
  for (int sig : kFatalSignals) {
    g_managed[sig] = true;
    struct sigaction old;
    if (__sigaction(sig, nullptr, &old) != 0 || !is_default(old)) continue;
    g_program_view[sig] = old;
    if (__sigaction(sig, &ours, nullptr) == 0) g_ours[sig].store(true);
  }
  g_signals_installed.store(true, std::memory_order_release);
}

void at_exit() {
  memtrail::stop();
}

// fork(): tables and the block pool are locked across it so the child's
// copies are consistent; the child then starts a new session of its own.
Session* g_forking_session = nullptr;
// The forking thread's mask before before_fork() held the signals below.
__thread sigset_t t_mask_before_fork __attribute__((tls_model("initial-exec")));

// The signals whose handler finishes the trace, held from the prepare handler
// until the session each side goes on with is whole: in the parent, one
// landing in drain_before_fork found this thread draining, and the trace
// ended at its last flush; in the child (which inherits the mask, not the
// pending signals), one sent right after the fork, as a Pool's terminate()
// does to a worker still starting, found the parent's session abandoned or
// the child's trace file made but its session not yet running, and the
// child died with a trace of a header only, or none. Held, it is taken at
// the unmask, and its handler finishes the trace. SIGPIPE stays open, as
// while a program thread drains (drain_sharing.cpp).
void hold_signals_across_fork() {
  sigset_t held = writer_blocked_signals();
  sigdelset(&held, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &held, &t_mask_before_fork);
}

void release_signals_after_fork() {
  pthread_sigmask(SIG_SETMASK, &t_mask_before_fork, nullptr);
}

void before_fork() {
  hold_signals_across_fork();
  g_forking_session = g_session.load(std::memory_order_acquire);
  if (g_forking_session) {
    g_forking_session->work_mutex.lock();  // writer idle
    // The child's session creates and reports its trace through the run
    // directory and its list, which are in the writer's table only.
    if (g_forking_session->options.follow_forks) lend_run_directory_for_fork();
    drain_before_fork(*g_forking_session);  // the live map the child inherits
  }
  tables().mutex.lock();
  if (g_forking_session) {
    g_forking_session->blocks.lock();
    g_forking_session->live_mutex.lock();
  }
  detail::own_heap_lock();
}

void after_fork_parent() {
  run_directory_after_fork(false, false);  // before work_mutex: a next fork lends anew
  detail::own_heap_unlock();
  if (g_forking_session) {
    g_forking_session->live_mutex.unlock();
    g_forking_session->blocks.unlock();
    g_forking_session->work_mutex.unlock();
  }
  tables().mutex.unlock();
  release_signals_after_fork();
}

// The parent's writer thread does not exist in a fork child: it abandons
// the parent's session, and the copies of its descriptors (each generation
// would keep more).
void abandon_parent_session(Session* parent) {
  detail::g_tracing.store(false, std::memory_order_relaxed);
  g_session.store(nullptr, std::memory_order_relaxed);
  t_buffer = nullptr;
  if (parent->writer) parent->writer->abandon();
  if (parent->own_table)
    parent->statm.fd = -1;  // in the parent's writer's table: the number is not ours here
  else
    parent->statm.release();
  parent->tally.unmap();  // the parent's count, shared: never to be touched here
}

void start_child_session() {
  detail::own_heap_unlock();
  Session* parent = g_forking_session;
  if (parent) {
    parent->live_mutex.unlock();
    parent->blocks.unlock();  // its work_mutex stays locked: that session is dead here
  }
  tables().mutex.unlock();
  if (!parent) return;
  abandon_parent_session(parent);
  run_directory_after_fork(true, parent->options.follow_forks);
  if (!parent->options.follow_forks) return;  // --no-follow: the child runs untraced
  ++t_internal;
  // The parent's live map and stack trie, as the fork copied them, are
  // consistent: its writer was idle (work_mutex) and nothing undrained.
  // The child's first drain writes them into its trace.
  start_session(parent->options, true, false, parent, "inherited at fork from the heap");
  --t_internal;
}

void after_fork_child() {
  start_child_session();
  release_signals_after_fork();  // the child's session is running (or none is)
}

}  // namespace

void Session::finish_on_signal(int sig, int timeout_ms) {
  ended_by_signal.store(sig, std::memory_order_release);
  detail::g_tracing.store(false, std::memory_order_release);
  exit_requested.store(true, std::memory_order_release);
  wake();
  timespec nap{0, 1'000'000};
  for (int waited = 0; waited < timeout_ms && !trace_finished.load(std::memory_order_acquire) &&
                       !writer_done.load(std::memory_order_acquire);
       ++waited)
    ::nanosleep(&nap, nullptr);
}

bool abandon_if_foreign(Session* s) {
  const int pid = static_cast<int>(::getpid());
  if (pid == s->pid) return false;
  if (s->fork_probe && *s->fork_probe != 0) return false;  // a vfork child: the parent's memory
  if (g_session.load(std::memory_order_acquire) != s) return true;  // abandoned already
  abandon_parent_session(s);
  detail::diagnostic(
      "memtrail: process %d was forked without fork handlers (a fork or clone system call); it "
      "runs untraced, its heap events are not recorded\n",
      pid);
  return true;
}

// A thread_local destructor (what `thread_local` objects' destructors use),
// not a pthread key: a key is one of the program's PTHREAD_KEYS_MAX (issue
// 26, item 7b). It runs before the pthread key destructors, so the frees
// those make are late frees (late_frees.hpp), as after a key of ours that
// came first. The main thread is not watched: its exit ends the process,
// and its events after exit() (atexit handlers, the exit scan) are recorded.
void watch_thread_exit(ThreadBuffer* tb) {
  if (syscall(SYS_gettid) == getpid()) return;
  ++t_internal;  // its node (a calloc) is the tracer's
  __cxa_thread_atexit_impl(&on_thread_exit, tb, &__dso_handle);
  --t_internal;
}

void run_exit_hook() {
  if (auto fn = g_exit_hook.load(std::memory_order_acquire)) {
    fn();
    if (Session* s = g_session.load(std::memory_order_acquire)) s->request_flush(5000);
  }
}

void install_process_hooks() {
  static bool installed = false;
  if (installed) return;
  installed = true;
  install_signal_handlers();
  pthread_atfork(before_fork, after_fork_parent, after_fork_child);
  std::atexit(at_exit);
}

}  // namespace memtrail::runtime

namespace memtrail::detail {

__thread bool t_in_real_allocator __attribute__((tls_model("initial-exec"))) = false;
__thread int t_deferred_signal __attribute__((tls_model("initial-exec"))) = 0;
__thread bool t_recorder_thread __attribute__((tls_model("initial-exec"))) = false;

void raise_deferred_signal() noexcept {
  int sig = t_deferred_signal;
  t_deferred_signal = 0;
  if (sig != 0) raise(sig);
}

// glibc's fork() takes malloc's locks after the prepare handlers; _Fork()
// takes none, so the heap probe (the recorder's one thread that may be
// inside malloc outside work_mutex) is held out of mallinfo2() as well.
void before_raw_fork() {
  runtime::before_fork();
  if (runtime::g_forking_session) runtime::g_forking_session->heap_probe.hold(100);
}

void after_raw_fork(bool child) {
  if (runtime::g_forking_session) runtime::g_forking_session->heap_probe.release();
  if (child)
    runtime::after_fork_child();
  else
    runtime::after_fork_parent();
}

// unshare(CLONE_NEWUSER) and its kind need a single-threaded process: the
// recorder's threads leave for the call (the writer after a flush; the
// heap probe) and start again after it; program threads meanwhile drain
// their own blocks if they fill (next_block).
bool pause_threads() {
  runtime::Session* s = runtime::g_session.load(std::memory_order_acquire);
  if (!s || !s->writer_thread.joinable() || std::this_thread::get_id() == s->writer_thread.get_id())
    return false;
  s->pause_ticket = s->flush_requested.fetch_add(1, std::memory_order_acq_rel) + 1;
  s->pause_requested.store(true, std::memory_order_release);
  s->wake();
  s->writer_thread.join();
  s->heap_probe.stop();
  return true;
}

void resume_threads() {
  runtime::Session* s = runtime::g_session.load(std::memory_order_acquire);
  if (!s || s->writer_thread.joinable()) return;
  s->pause_requested.store(false, std::memory_order_release);
  sigset_t blocked = runtime::writer_blocked_signals(), old_mask;
  pthread_sigmask(SIG_BLOCK, &blocked, &old_mask);
  try {
    s->writer_thread = std::thread([s] { s->writer_main(); });
  } catch (const std::exception& e) {
    s->stop_tracing(e);  // says so; the program goes on untraced
  }
  pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
}

void notice_fork_without_handlers() {
  if (runtime::Session* s = runtime::g_session.load(std::memory_order_acquire))
    runtime::abandon_if_foreign(s);
}

void set_exit_hook(void (*fn)()) {
  runtime::g_exit_hook.store(fn, std::memory_order_release);
}

int program_sigaction(int sig, const struct sigaction* act, struct sigaction* old) noexcept {
  using namespace runtime;
  if (sig <= 0 || sig >= kSignalSlots || !g_managed[sig] ||
      !g_signals_installed.load(std::memory_order_acquire))
    return __sigaction(sig, act, old);
  bool ours = g_ours[sig].load();
  struct sigaction before;
  std::memset(&before, 0, sizeof before);
  if (ours) before = g_program_view[sig];
  int rc = 0;
  if (act == nullptr) {
    if (!ours) rc = __sigaction(sig, nullptr, &before);
  } else {
    struct sigaction wanted = *act;  // act and old may be the same object
    struct sigaction real_old;
    if (is_default(wanted)) {
      // SIG_DFL: ours stands in for it, so this death is recorded too.
      struct sigaction mine = our_action();
      rc = ours ? 0 : __sigaction(sig, &mine, &real_old);
      if (rc == 0) {
        if (!ours) before = real_old;
        g_program_view[sig] = wanted;
        g_ours[sig].store(true);
      }
    } else {
      rc = __sigaction(sig, &wanted, &real_old);
      if (rc == 0) {
        if (!ours) before = real_old;
        g_ours[sig].store(false);
      }
    }
  }
  if (rc == 0 && old) *old = before;
  return rc;
}

}  // namespace memtrail::detail

namespace {

// Programs that link libmemtrail.so start tracing by setting MEMTRAIL_OUTPUT
// (MEMTRAIL_AUTOSTART=0 leaves starting to a library that wants its own options).
__attribute__((constructor)) void memtrail_autostart() {
  const char* output = std::getenv("MEMTRAIL_OUTPUT");
  const char* autostart = std::getenv("MEMTRAIL_AUTOSTART");
  if (!output || !*output || (autostart && std::strcmp(autostart, "0") == 0)) return;
  memtrail::start(memtrail::RecorderOptions::from_environment());
}

// Covers dlclose() of the library and exits that skip atexit ordering.
__attribute__((destructor)) void memtrail_shutdown() {
  memtrail::stop();
}

}  // namespace
