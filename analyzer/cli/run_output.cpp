// memtrail run's output directory (run_output.hpp).
#include "run_output.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "memtrail/run_index.hpp"
#include "trace_outcome.hpp"

namespace memtrail::cli {
namespace {

int fail(const std::string& message) {
  std::fprintf(stderr, "memtrail run: %s\n", message.c_str());
  return -1;
}

// A single .mtr file of an older memtrail stands where the run goes: the
// run replaces it, as a run replaced its own earlier file before.
bool is_trace_file(const std::string& path) {
  static constexpr unsigned char kMagic[8] = {0x89, 'M', 'T', 'R', 'A', 'C', 'E', '\n'};
  unsigned char head[8] = {};
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool same = ::read(fd, head, sizeof head) == sizeof head && std::memcmp(head, kMagic, 8) == 0;
  ::close(fd);
  return same;
}

}  // namespace

int prepare_run_directory(const std::string& directory) {
  struct stat st;
  if (::lstat(directory.c_str(), &st) == 0 && !S_ISDIR(st.st_mode)) {
    if (!S_ISREG(st.st_mode) || !is_trace_file(directory))
      return fail(directory + " exists and is not a run directory; choose another -o");
    if (::unlink(directory.c_str()) != 0 && errno != ENOENT)
      return fail("cannot replace the old trace " + directory + ": " + std::strerror(errno));
  }
  if (::mkdir(directory.c_str(), 0755) != 0 && errno != EEXIST)
    return fail("cannot create run directory " + directory + ": " + std::strerror(errno));
  std::string lock_path = directory + "/" + kRunLockFile;
  int lock = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock < 0) return fail("cannot create " + lock_path + ": " + std::strerror(errno));
  if (::flock(lock, LOCK_EX | LOCK_NB) != 0) {
    ::close(lock);
    return fail(directory + " is in use by another memtrail run; choose another -o");
  }
  std::string error;
  if (!clear_run_directory(directory, false, &error)) {  // a stale run's files
    ::close(lock);
    return fail(error + "; choose another -o");
  }
  return lock;
}

void finish_run_directory(const std::string& directory, const std::string& shown_name,
                          pid_t root_pid, int wait_status, bool quiet) {
  std::string error;
  auto run = read_run(directory, &error);
  if (!run) {
    std::fprintf(stderr,
                 "memtrail: no trace was written to %s (the program did not start tracing)\n",
                 shown_name.c_str());
    clear_run_directory(directory, true, &error);
    return;
  }
  int exit_status = WIFEXITED(wait_status)     ? WEXITSTATUS(wait_status)
                    : WIFSIGNALED(wait_status) ? 128 + WTERMSIG(wait_status)
                                               : -1;
  std::ofstream(directory + "/" + kRunIndexFile, std::ios::trunc)
      << run_index_tsv(*run, static_cast<std::uint32_t>(root_pid), exit_status);
  std::string line =
      run_outcome_message(*run, shown_name, static_cast<std::uint32_t>(root_pid), wait_status);
  // Quiet leaves out only the good news.
  if (!quiet || line.rfind("memtrail: trace written to ", 0) != 0)
    std::fprintf(stderr, "%s\n", line.c_str());
}

}  // namespace memtrail::cli
