// The tracer's messages to the user (memtrail/detail/diagnostics.hpp).
#include "memtrail/detail/diagnostics.hpp"

#include <errno.h>
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

Identity identity_of_stderr() {
  struct stat st;
  if (::fstat(2, &st) != 0) return {};
  return {true, st.st_dev, st.st_ino};
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
  Identity now = identity_of_stderr();
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
      (void)!::write(2, line, length);
    }
  }
  errno = saved_errno;
}

}  // namespace memtrail::detail
