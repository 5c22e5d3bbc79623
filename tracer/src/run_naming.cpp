// The names of the trace files of a `memtrail run` run directory (output
// ending in '/'): every process image writes <dir>/<pid>.<seq>.<program>.mtr,
// where <seq> counts the images of that pid (0 = the process as it started
// or was forked, 1 = after its first exec, ...). Each name is claimed with
// O_EXCL, so no trace can replace or share another's file, even when a pid
// is reused inside one run.
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "memtrail/detail/exec.hpp"
#include "runtime.hpp"

namespace memtrail {
namespace runtime {
namespace {

// Sequence number of this image's current (or last) trace; -1 before the
// first. A fork child starts again at 0.
int g_sequence = -1;

// The sequence the exec'ing image passed as MEMTRAIL_EXEC_PID=<pid>.<seq>.
int sequence_from_exec_marker() {
  const char* v = std::getenv("MEMTRAIL_EXEC_PID");
  const char* dot = v ? std::strchr(v, '.') : nullptr;
  if (!dot) return 1;
  char* end = nullptr;
  long seq = std::strtol(dot + 1, &end, 10);
  return seq > 0 && seq < 1000000 && *end == '\0' ? static_cast<int>(seq) : 1;
}

// The program's short name made safe for a file name.
std::string program_label() {
  std::string name = program_invocation_short_name ? program_invocation_short_name : "";
  if (name.size() > 48) name.resize(48);
  for (char& c : name) {
    bool safe = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                c == '.' || c == '_' || c == '+' || c == '-';
    if (!safe) c = '_';
  }
  return name.empty() ? "unknown" : name;
}

}  // namespace

bool is_run_directory_output(const std::string& output) {
  return !output.empty() && output.back() == '/';
}

std::string claim_run_file(const std::string& directory, bool fork_child, bool exclusive) {
  if (fork_child)
    g_sequence = 0;
  else if (exclusive)  // an exec'd image, or this one resuming after a failed exec
    g_sequence = g_sequence >= 0 ? g_sequence + 1 : sequence_from_exec_marker();
  else
    g_sequence = 0;
  std::string stem = directory + std::to_string(::getpid()) + ".";
  std::string program = "." + program_label() + ".mtr";
  for (int tries = 0; tries < 1000; ++tries, ++g_sequence) {
    std::string path = stem + std::to_string(g_sequence) + program;
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0) {
      ::close(fd);
      return path;
    }
    if (errno != EEXIST) return path;  // the writer reports why it cannot open it
  }
  return stem + std::to_string(g_sequence) + program;
}

}  // namespace runtime

int detail::next_image_sequence() {
  return runtime::g_sequence + 1;
}

}  // namespace memtrail
