// The tracer's messages to the user (memtrail/detail/diagnostics.hpp).
#include "memtrail/detail/diagnostics.hpp"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdarg>
#include <cstdio>

namespace memtrail::detail {

namespace {

struct Identity {
  bool open = false;
  dev_t dev = 0;
  ino_t ino = 0;
};

Identity identity_of(int fd) {
  struct stat st;
  if (fd < 0 || ::fstat(fd, &st) != 0) return {};
  return {true, st.st_dev, st.st_ino};
}

Identity identity_of_stderr() {
  return identity_of(2);
}

// The recorder's writer thread has a descriptor table of its own
// (private_fd.hpp) without fd 2: it reaches the program's stderr through
// /proc/self/fd/2 (the process's table), opened for the one line. -1: none.
int stderr_of_this_thread(bool* opened) {
  *opened = false;
  if (::fcntl(2, F_GETFD) >= 0 || errno != EBADF) return 2;
  int fd = ::open("/proc/self/fd/2", O_WRONLY | O_APPEND | O_CLOEXEC | O_NOCTTY);
  *opened = fd >= 0;
  return fd;
}

// Taken when libmemtrail.so is loaded: before the program's main and its
// constructors (the preload's dependencies are initialised first).
const Identity g_users_stderr = identity_of_stderr();
std::atomic<bool> g_guarded{false};

}  // namespace

void guard_diagnostics() {
  g_guarded.store(true, std::memory_order_relaxed);
}

void diagnostic(const char* format, ...) {
  int saved_errno = errno;
  bool opened = false;
  const int fd = stderr_of_this_thread(&opened);
  Identity now = identity_of(fd);
  bool guarded = g_guarded.load(std::memory_order_relaxed);
  if (now.open && (!guarded || (g_users_stderr.open && now.dev == g_users_stderr.dev &&
                                now.ino == g_users_stderr.ino))) {
    char line[512];
    va_list args;
    va_start(args, format);
    int n = std::vsnprintf(line, sizeof line, format, args);
    va_end(args);
    if (n > 0) {
      std::size_t length = static_cast<std::size_t>(n) < sizeof line ? n : sizeof line - 1;
      if (line[length - 1] != '\n' && length == sizeof line - 1) line[length - 1] = '\n';
      (void)!::write(fd, line, length);
    }
  }
  if (opened) ::close(fd);
  errno = saved_errno;
}

}  // namespace memtrail::detail
