// Process-level hooks of the recorder: flush at exit, on fatal signals (then
// re-raise with the previous disposition so the exit status is unchanged),
// thread-exit notices, and fork (the child starts its own trace file).
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "runtime.hpp"

namespace memtrail::runtime {

namespace {

std::atomic<void (*)()> g_exit_hook{nullptr};
pthread_key_t g_exit_key;

constexpr int kFatalSignals[] = {SIGSEGV, SIGBUS, SIGABRT, SIGTERM, SIGINT, SIGFPE, SIGILL};
struct sigaction g_previous[64];
std::atomic<int> g_in_fatal{0};

void on_thread_exit(void* p) {
  auto* tb = static_cast<ThreadBuffer*>(p);
  // Nothing this thread does from here on is recorded, so the writer may
  // recycle its blocks once it has seen `exited`.
  t_internal = 1;
  t_buffer = nullptr;
  tb->exited.store(true, std::memory_order_release);
  tb->session->live_threads.fetch_sub(1, std::memory_order_relaxed);
}

void on_fatal_signal(int sig, siginfo_t*, void*) {
  int saved_errno = errno;
  // A thread stopped inside its own drain holds the lock the flush needs:
  // the trace then ends at its last flush.
  if (g_in_fatal.fetch_add(1) == 0 && !t_draining) {
    if (Session* s = g_session.load(std::memory_order_acquire)) {
      ++t_internal;
      s->request_flush(1000);
    }
  }
  sigaction(sig, &g_previous[sig], nullptr);
  errno = saved_errno;
  // Pending until this handler returns, then delivered with the old disposition.
  raise(sig);
}

void install_signal_handlers() {
  for (int sig : kFatalSignals) {
    struct sigaction old;
    if (sigaction(sig, nullptr, &old) != 0) continue;
    // An ignored SIGINT/SIGTERM (nohup, background jobs) stays ignored; a
    // program's own handler is kept and chained to after the flush.
    if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_IGN) continue;
    g_previous[sig] = old;
    struct sigaction sa;
    std::memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fatal_signal;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, nullptr);
  }
}

void at_exit() {
  memtrail::stop();
}

// fork(): tables and the block pool are locked across it so the child's
// copies are consistent; the child then starts a new session of its own.
Session* g_forking_session = nullptr;

void before_fork() {
  g_forking_session = g_session.load(std::memory_order_acquire);
  if (g_forking_session) g_forking_session->work_mutex.lock();  // writer idle
  tables().mutex.lock();
  if (g_forking_session) g_forking_session->blocks.lock();
}

void after_fork_parent() {
  if (g_forking_session) {
    g_forking_session->blocks.unlock();
    g_forking_session->work_mutex.unlock();
  }
  tables().mutex.unlock();
}

void after_fork_child() {
  Session* parent = g_forking_session;
  if (parent) parent->blocks.unlock();  // its work_mutex stays locked: that session is dead here
  tables().mutex.unlock();
  if (!parent) return;
  // The parent's writer thread does not exist here; abandon its session,
  // and the copies of its descriptors (each generation would keep more).
  detail::g_tracing.store(false, std::memory_order_relaxed);
  g_session.store(nullptr, std::memory_order_relaxed);
  t_buffer = nullptr;
  if (parent->writer) parent->writer->abandon();
  parent->statm.release();
  if (!parent->options.follow_forks) return;  // --no-follow: the child runs untraced
  ++t_internal;
  start_session(parent->options, true, false);
  --t_internal;
}

}  // namespace

void watch_thread_exit(ThreadBuffer* tb) {
  pthread_setspecific(g_exit_key, tb);
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
  pthread_key_create(&g_exit_key, on_thread_exit);
  install_signal_handlers();
  pthread_atfork(before_fork, after_fork_parent, after_fork_child);
  std::atexit(at_exit);
}

}  // namespace memtrail::runtime

namespace memtrail::detail {

void set_exit_hook(void (*fn)()) {
  runtime::g_exit_hook.store(fn, std::memory_order_release);
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
