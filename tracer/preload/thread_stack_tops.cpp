#include "thread_stack_tops.hpp"

#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>

namespace memtrail::preload {
namespace {

// Threads answered per scan; more are scanned whole, as before.
constexpr int kMaxAnswers = 4096;
#if defined(__x86_64__)
constexpr int kRegisterWords = NGREG;
#else
constexpr int kRegisterWords = 34;  // aarch64: x0..x30, sp, pc, pstate
#endif

struct Answer {
  std::atomic<std::uint64_t> tid{0};  // 0: slot free; set last
  std::uintptr_t sp = 0;
  std::uintptr_t regs[kRegisterWords] = {};
};

Answer g_answers[kMaxAnswers];
std::atomic<int> g_next_answer{0};

void on_scan_signal(int, siginfo_t*, void* context) {
  int saved_errno = errno;
  int slot = g_next_answer.fetch_add(1, std::memory_order_relaxed);
  if (slot < kMaxAnswers) {
    Answer& a = g_answers[slot];
    const auto* uc = static_cast<const ucontext_t*>(context);
#if defined(__x86_64__)
    for (int i = 0; i < kRegisterWords; ++i) a.regs[i] = uc->uc_mcontext.gregs[i];
    a.sp = uc->uc_mcontext.gregs[REG_RSP];
#elif defined(__aarch64__)
    for (int i = 0; i < 31; ++i) a.regs[i] = uc->uc_mcontext.regs[i];
    a.regs[31] = a.sp = uc->uc_mcontext.sp;
#else
    a.sp = reinterpret_cast<std::uintptr_t>(&a);  // unknown: the caller scans it whole
#endif
    a.tid.store(static_cast<std::uint64_t>(syscall(SYS_gettid)), std::memory_order_release);
  }
  errno = saved_errno;
}

// A real-time signal nobody handles: the program's own signals stay its own.
int free_signal() {
  for (int sig = SIGRTMAX - 1; sig > SIGRTMIN + 4; --sig) {
    struct sigaction old = {};
    if (sigaction(sig, nullptr, &old) != 0) continue;
    if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_DFL) return sig;
  }
  return 0;
}

}  // namespace

std::vector<ThreadStackTop> collect_thread_stack_tops(const std::vector<std::uint64_t>& tids,
                                                      int timeout_ms) {
  std::vector<ThreadStackTop> tops(tids.size());
  for (std::size_t i = 0; i < tids.size(); ++i) tops[i].tid = tids[i];
  const int sig = free_signal();
  if (sig == 0 || tids.empty()) return tops;
  for (Answer& a : g_answers) a.tid.store(0, std::memory_order_relaxed);
  g_next_answer.store(0, std::memory_order_release);

  // The handler stays installed: a signal still pending in a thread that
  // blocks it must never meet the default action, which kills the process.
  struct sigaction action = {};
  action.sa_sigaction = on_scan_signal;
  action.sa_flags = SA_SIGINFO | SA_RESTART;
  sigfillset(&action.sa_mask);
  if (sigaction(sig, &action, nullptr) != 0) return tops;

  const pid_t pid = getpid();
  std::size_t sent = 0;
  for (std::uint64_t tid : tids)
    if (syscall(SYS_tgkill, pid, static_cast<pid_t>(tid), sig) == 0) ++sent;

  timespec start;
  clock_gettime(CLOCK_MONOTONIC, &start);
  for (;;) {
    std::size_t answered = 0;
    int filled = std::min(g_next_answer.load(std::memory_order_acquire), kMaxAnswers);
    for (int i = 0; i < filled; ++i)
      answered += g_answers[i].tid.load(std::memory_order_acquire) != 0;
    if (answered >= sent) break;
    timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    long elapsed_ms = (now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000;
    if (elapsed_ms >= timeout_ms) break;
    timespec nap = {0, 200000};
    nanosleep(&nap, nullptr);
  }

  int filled = std::min(g_next_answer.load(std::memory_order_acquire), kMaxAnswers);
  for (int i = 0; i < filled; ++i) {
    const Answer& a = g_answers[i];
    std::uint64_t tid = a.tid.load(std::memory_order_acquire);
    for (ThreadStackTop& t : tops)
      if (tid != 0 && t.tid == tid && !t.answered) {
        t.answered = true;
        t.sp = a.sp;
        t.regs_begin = reinterpret_cast<std::uintptr_t>(a.regs);
        t.regs_end = reinterpret_cast<std::uintptr_t>(a.regs + kRegisterWords);
      }
  }
  return tops;
}

}  // namespace memtrail::preload
