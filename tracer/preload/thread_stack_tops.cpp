#include "thread_stack_tops.hpp"

#include <dirent.h>
#include <linux/futex.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>

#include "memtrail/detail/reentrancy.hpp"
#include "memtrail/detail/signals.hpp"

namespace memtrail::preload {
namespace {

// Threads answered per scan; more are scanned whole and not held.
constexpr int kMaxAnswers = 4096;
// New threads may appear while the scan signals (a thread not yet stopped
// creates one): the task list is read again this many times at most.
constexpr int kListRounds = 4;
#if defined(__x86_64__)
constexpr int kRegisterWords = NGREG;
#else
constexpr int kRegisterWords = 34;  // aarch64: x0..x30, sp, pc, pstate
#endif

struct Answer {
  std::atomic<std::uint64_t> tid{0};  // 0: slot free; set last
  bool recorder = false;              // one of the recorder's threads: not held
  std::uintptr_t sp = 0;
  std::uintptr_t thread_pointer = 0;
  std::uintptr_t regs[kRegisterWords] = {};
};

Answer g_answers[kMaxAnswers];
std::atomic<int> g_next_answer{0};
// Futex word: 0 while the scan holds the threads. A scan signal that arrives
// late (it was blocked, or deferred) finds 1 and returns at once.
std::atomic<std::uint32_t> g_release{1};

void copy_registers(Answer& a, const void* context) {
  const auto* uc = static_cast<const ucontext_t*>(context);
#if defined(__x86_64__)
  for (int i = 0; i < kRegisterWords; ++i) a.regs[i] = uc->uc_mcontext.gregs[i];
  a.sp = uc->uc_mcontext.gregs[REG_RSP];
#elif defined(__aarch64__)
  for (int i = 0; i < 31; ++i) a.regs[i] = uc->uc_mcontext.regs[i];
  a.regs[31] = a.sp = uc->uc_mcontext.sp;
#else
  a.sp = 0;  // unknown: the caller scans the thread's stack whole
#endif
}

void on_scan_signal(int sig, siginfo_t*, void* context) {
  const int saved_errno = errno;
  if (g_release.load(std::memory_order_acquire) != 0) {
    errno = saved_errno;
    return;
  }
  if (!detail::t_recorder_thread) {
    if (detail::t_in_real_allocator && detail::t_deferred_signal == 0) {
      // Stop where the allocator returns, with none of its locks held.
      detail::t_deferred_signal = sig;
      errno = saved_errno;
      return;
    }
    // Inside the recorder (which may hold its drain or table locks, that
    // the scan needs): not here; the scan signals again.
    if (detail::thread_is_internal()) {
      errno = saved_errno;
      return;
    }
  }
  int slot = g_next_answer.fetch_add(1, std::memory_order_relaxed);
  if (slot < kMaxAnswers) {
    Answer& a = g_answers[slot];
    copy_registers(a, context);
    a.recorder = detail::t_recorder_thread;
    a.thread_pointer = reinterpret_cast<std::uintptr_t>(__builtin_thread_pointer());
    a.tid.store(static_cast<std::uint64_t>(syscall(SYS_gettid)), std::memory_order_release);
  }
  while (!detail::t_recorder_thread && g_release.load(std::memory_order_acquire) == 0)
    syscall(SYS_futex, &g_release, FUTEX_WAIT_PRIVATE, 0, nullptr, nullptr, 0);
  errno = saved_errno;
}

// A real-time signal nobody handles: the program's own signals stay its own.
int free_signal() {
  for (int sig = SIGRTMAX - 1; sig > SIGRTMIN + 4; --sig) {
    struct sigaction old = {};
    if (sigaction(sig, nullptr, &old) != 0) continue;
    if (old.sa_sigaction == on_scan_signal) return sig;  // ours, from an earlier scan
    if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_DFL) return sig;
  }
  return 0;
}

// The process's threads now, from /proc/self/task.
std::vector<std::uint64_t> list_tasks() {
  std::vector<std::uint64_t> tids;
  if (DIR* dir = opendir("/proc/self/task")) {
    while (dirent* entry = readdir(dir))
      if (entry->d_name[0] >= '1' && entry->d_name[0] <= '9')
        tids.push_back(std::strtoull(entry->d_name, nullptr, 10));
    closedir(dir);
  }
  return tids;
}

long elapsed_ms(const timespec& start) {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000;
}

int answers_filled() {
  return std::min(g_next_answer.load(std::memory_order_acquire), kMaxAnswers);
}

bool answered(std::uint64_t tid) {
  for (int i = 0, n = answers_filled(); i < n; ++i)
    if (g_answers[i].tid.load(std::memory_order_acquire) == tid) return true;
  return false;
}

// Waits until every thread of `signalled` answered or the deadline passed,
// signalling again every millisecond those that did not: a thread inside
// the recorder lets the signal go and takes the next one.
void wait_for_answers(const std::vector<std::uint64_t>& signalled, int sig, const timespec& start,
                      int timeout_ms) {
  const pid_t pid = getpid();
  for (int nap = 0;; ++nap) {
    bool all = true;
    for (std::uint64_t tid : signalled) {
      if (answered(tid)) continue;
      all = false;
      if (nap % 10 == 9) syscall(SYS_tgkill, pid, static_cast<pid_t>(tid), sig);
    }
    if (all || elapsed_ms(start) >= timeout_ms) return;
    timespec pause = {0, 100000};
    nanosleep(&pause, nullptr);
  }
}

}  // namespace

WorldStop::WorldStop(int timeout_ms) {
  const int sig = free_signal();
  if (sig == 0) return;
  for (Answer& a : g_answers) a.tid.store(0, std::memory_order_relaxed);
  g_next_answer.store(0, std::memory_order_relaxed);
  g_release.store(0, std::memory_order_release);
  held_ = true;

  // The handler stays installed: a signal still pending in a thread that
  // blocks it must never meet the default action, which kills the process.
  struct sigaction action = {};
  action.sa_sigaction = on_scan_signal;
  action.sa_flags = SA_SIGINFO | SA_RESTART;
  sigfillset(&action.sa_mask);
  if (sigaction(sig, &action, nullptr) != 0) return;

  const pid_t pid = getpid();
  const auto self = static_cast<std::uint64_t>(syscall(SYS_gettid));
  std::vector<std::uint64_t> signalled;
  timespec start;
  clock_gettime(CLOCK_MONOTONIC, &start);
  for (int round = 0; round < kListRounds; ++round) {
    bool new_threads = false;
    for (std::uint64_t tid : list_tasks()) {
      if (tid == self || std::find(signalled.begin(), signalled.end(), tid) != signalled.end())
        continue;
      // A thread that is gone already needs no answer.
      if (syscall(SYS_tgkill, pid, static_cast<pid_t>(tid), sig) != 0) continue;
      signalled.push_back(tid);
      new_threads = true;
    }
    if (!new_threads) break;
    wait_for_answers(signalled, sig, start, timeout_ms);
  }

  for (std::uint64_t tid : signalled) {
    StoppedThread t;
    t.tid = tid;
    bool recorder = false;
    for (int i = 0, n = answers_filled(); i < n; ++i) {
      const Answer& a = g_answers[i];
      if (a.tid.load(std::memory_order_acquire) != tid) continue;
      recorder = a.recorder;
      t.answered = true;
      t.sp = a.sp;
      t.thread_pointer = a.thread_pointer;
      t.regs_begin = reinterpret_cast<std::uintptr_t>(a.regs);
      t.regs_end = reinterpret_cast<std::uintptr_t>(a.regs + kRegisterWords);
    }
    if (!recorder) threads_.push_back(t);
  }
}

void WorldStop::release() {
  if (!held_) return;
  held_ = false;
  g_release.store(1, std::memory_order_release);
  syscall(SYS_futex, &g_release, FUTEX_WAKE_PRIVATE, INT32_MAX, nullptr, nullptr, 0);
}

WorldStop::~WorldStop() {
  release();
}

}  // namespace memtrail::preload
