// Signal forwarding and exit status of `memtrail run` (run_signals.hpp).
#include "run_signals.hpp"

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace memtrail::cli {
namespace {

constexpr int kForwarded[] = {SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2};

sigset_t g_mask_at_start;
std::atomic<pid_t> g_child{0};

void forward(int sig, siginfo_t* info, void*) {
  int saved_errno = errno;
  pid_t child = g_child.load();
  // The terminal signals the whole foreground process group, the program
  // too unless it left it: sending it again would count twice.
  bool from_terminal = info != nullptr && info->si_code == SI_KERNEL;
  if (child > 0 && !(from_terminal && getpgid(child) == getpgrp())) kill(child, sig);
  errno = saved_errno;
}

}  // namespace

void block_forwarded_signals() {
  sigset_t block;
  sigemptyset(&block);
  for (int sig : kForwarded) sigaddset(&block, sig);
  sigprocmask(SIG_BLOCK, &block, &g_mask_at_start);
}

void restore_signal_mask() {
  sigprocmask(SIG_SETMASK, &g_mask_at_start, nullptr);
}

void forward_signals_to(pid_t child) {
  g_child.store(child);
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = forward;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  for (int sig : kForwarded) {
    struct sigaction old;
    // An ignored signal (nohup) stays ignored, for memtrail run as for the
    // program, which inherited SIG_IGN.
    if (sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;
    sigaction(sig, &sa, nullptr);
  }
  restore_signal_mask();
}

bool wait_for_program(pid_t child, int* status) {
  while (waitpid(child, status, 0) < 0) {
    if (errno != EINTR) {
      std::fprintf(stderr, "memtrail run: waitpid failed: %s\n", std::strerror(errno));
      return false;
    }
  }
  g_child.store(0);
  return true;
}

int exit_like_program(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (!WIFSIGNALED(status)) return 1;
  int sig = WTERMSIG(status);
  std::fflush(nullptr);
  // The program dumped its own core if it was to; memtrail's is of no use.
  struct rlimit no_core = {0, 0};
  setrlimit(RLIMIT_CORE, &no_core);
  signal(sig, SIG_DFL);
  sigset_t only;
  sigemptyset(&only);
  sigaddset(&only, sig);
  sigprocmask(SIG_UNBLOCK, &only, nullptr);
  raise(sig);
  return 128 + sig;  // a signal that does not end a process by default
}

}  // namespace memtrail::cli
