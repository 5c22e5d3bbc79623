// Signal forwarding and the final message of `memtrail run` (run_signals.hpp).
#include "run_signals.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "memtrail/trace_file.hpp"

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

std::string signal_name(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(sig);
}

std::string directory_of(const std::string& path) {
  auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// The file ends with the writer's end chunk: type 2, no payload, a valid
// frame crc (trace-format.md, section 2). 21 bytes, read from the end, so a
// trace of any size is checked at once.
bool ends_with_end_marker(const std::string& path) {
  constexpr int kEndChunkBytes = 17 + 4;
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  unsigned char b[kEndChunkBytes];
  off_t size = lseek(fd, 0, SEEK_END);
  bool ok = size >= kEndChunkBytes &&
            pread(fd, b, sizeof b, size - kEndChunkBytes) == static_cast<ssize_t>(sizeof b);
  close(fd);
  if (!ok) return false;
  auto u32 = [&](int at) {
    return std::uint32_t{b[at]} | std::uint32_t{b[at + 1]} << 8 | std::uint32_t{b[at + 2]} << 16 |
           std::uint32_t{b[at + 3]} << 24;
  };
  return b[0] == 2 && u32(1) == 0 && u32(5) == 0 &&
         u32(13) == static_cast<std::uint32_t>(crc32(0, b, 13)) && u32(17) == 0;
}

// Why a program that ended this way may have left an unfinished trace.
std::string how_it_ended(int status) {
  if (WIFSIGNALED(status))
    return "the program was killed by " + signal_name(WTERMSIG(status)) +
           (WTERMSIG(status) == SIGKILL ? ", which cannot be caught"
                                        : " before the trace was finished");
  return "writing it failed or was cut short; see above";
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

std::string trace_outcome_message(const std::string& path, const std::string& path_absolute,
                                  int status) {
  struct stat st;
  if (stat(path_absolute.c_str(), &st) != 0) {
    std::string dir = directory_of(path_absolute);
    if (access(dir.c_str(), W_OK | X_OK) != 0)
      return "memtrail: no trace was written: cannot create " + path + " (" + std::strerror(errno) +
             ")";
    return "memtrail: no trace was written to " + path +
           " (the program did not start tracing: a static or setuid program ignores "
           "LD_PRELOAD)";
  }
  if (S_ISDIR(st.st_mode)) return "memtrail: no trace was written: " + path + " is a directory";
  if (!S_ISREG(st.st_mode))
    return "memtrail: no trace was written: " + path +
           " is not a regular file, so it cannot hold a trace";
  std::string header_error = TraceReader(path_absolute).header_error();
  if (st.st_size == 0 || !header_error.empty())
    return "memtrail: no usable trace in " + path + " (" +
           (st.st_size == 0 ? "the file is empty" : header_error) + "): " + how_it_ended(status);
  if (!ends_with_end_marker(path_absolute))
    return "memtrail: trace " + path +
           " is incomplete (no end-of-trace marker; it reads up to its last whole chunk): " +
           how_it_ended(status);
  return "memtrail: trace written to " + path;
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
