// The checks before `memtrail attach` (see attach_permission.hpp).
#include "attach_permission.hpp"

#include <signal.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

namespace memtrail::cli {

namespace {

std::string first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// "TracerPid:\t45" of /proc/PID/status; 0 when untraced or unreadable.
pid_t tracer_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("TracerPid:", 0) == 0) return static_cast<pid_t>(std::atol(line.c_str() + 10));
  return 0;
}

// Yama's setting: -1 when the kernel has no Yama. The path can be changed
// for tests (MEMTRAIL_PTRACE_SCOPE_FILE): a test cannot change the real
// sysctl, and the refusals it leads to must still be tested.
int ptrace_scope() {
  const char* path = std::getenv("MEMTRAIL_PTRACE_SCOPE_FILE");
  std::string text = first_line(path && *path ? path : "/proc/sys/kernel/yama/ptrace_scope");
  if (text.empty()) return -1;
  return std::atoi(text.c_str());
}

// Seizes `pid` and lets it go: what the kernel says (capabilities, Yama,
// user namespaces, seccomp). PTRACE_SEIZE does not stop the process; the
// interrupt stops it for the detach, which needs a stopped tracee.
int probe_ptrace(pid_t pid) {
  if (ptrace(PTRACE_SEIZE, pid, nullptr, nullptr) != 0) return errno;
  if (ptrace(PTRACE_INTERRUPT, pid, nullptr, nullptr) == 0) {
    int status = 0;
    while (waitpid(pid, &status, __WALL) < 0 && errno == EINTR) {
    }
  }
  ptrace(PTRACE_DETACH, pid, nullptr, nullptr);
  return 0;
}

}  // namespace

bool has_memtrail_loaded(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/maps");
  std::string line;
  while (std::getline(in, line))
    if (line.find("libmemtrail_preload.so") != std::string::npos) return true;
  return false;
}

std::string attach_refusal(pid_t pid) {
  std::string who = "process " + std::to_string(pid);
  if (pid <= 0 || (kill(pid, 0) != 0 && errno == ESRCH))
    return "no process with pid " + std::to_string(pid);
  if (pid == getpid()) return who + " is memtrail itself";
  if (pid_t tracer = tracer_of(pid); tracer != 0) {
    std::string name = first_line("/proc/" + std::to_string(tracer) + "/comm");
    return who + " is already traced by process " + std::to_string(tracer) +
           (name.empty() ? "" : " (" + name + ")") + ": only one tracer can attach";
  }
  if (has_memtrail_loaded(pid)) return who + " is already traced by memtrail";
  int scope = ptrace_scope();
  std::string setting = "kernel.yama.ptrace_scope = " + std::to_string(scope);
  if (scope >= 3) return "ptrace is disabled on this machine (" + setting + ")";
  if (int e = probe_ptrace(pid); e != 0) {
    if (e == ESRCH) return "no process with pid " + std::to_string(pid);
    return "the kernel does not let memtrail ptrace " + who + " (" + std::strerror(e) +
           (scope >= 1 ? "; " + setting + ": only a process with CAP_SYS_PTRACE may attach" : "") +
           ")";
  }
  return "";
}

}  // namespace memtrail::cli
