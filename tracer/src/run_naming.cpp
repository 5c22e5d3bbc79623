// The names of the trace files of a `memtrail run` run directory (output
// ending in '/'): every process image writes <dir>/<pid>.<seq>.<program>.mtr,
// where <seq> counts the images of that pid (0 = the process as it started
// or was forked, 1 = after its first exec, ...). Each name is claimed with
// O_EXCL, so no trace can replace or share another's file, even when a pid
// is reused inside one run.
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "memtrail/detail/exec.hpp"
#include "private_fd.hpp"
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

// The run directory, open (O_PATH) at a high number since this image's
// first trace, inherited by fork children: they create their files through
// it, by name. Checked (device, inode) before each use: a daemon that
// closed every descriptor may hold the number now. Not opened under a tiny
// descriptor limit (every number is the program's then).
detail::OwnFd g_run_directory;
std::string g_run_directory_path;
// The run's list of missing traces (created by memtrail run), open for
// appending beside the directory: a process that can no longer create a
// file there (setuid) can still append its line.
detail::OwnFd g_missing_list;
constexpr const char* kRunMissingFile = ".memtrail-run.missing";  // as in run_index.hpp

// Where the two are: in the program's table (registered: the descriptor
// interposers keep the program's dup2 and close off them) until the
// session's writer holds its copies, then only in the writer's private
// table (hand_over_run_directory_locked), whose thread id is g_writer_tid.
// A kernel before 6.9 cannot copy them back out of that table for a fork
// child (pidfd_getfd of a PIDFD_THREAD pidfd): they stay in the program's.
bool g_in_writer_table = false;
pid_t g_writer_tid = 0;
// Across a fork: the writer's numbers, while the slots hold the copies
// lent to the program's table for the child (lend_run_directory_for_fork).
int g_writer_directory_fd = -1, g_writer_list_fd = -1;
bool g_lent = false;

void open_run_directory(const std::string& directory) {
  if (g_in_writer_table) {
    // That writer is gone (a start after stop, or after a failed exec):
    // its table and these numbers with it. The numbers are the program's.
    g_run_directory.fd = g_missing_list.fd = -1;
    g_in_writer_table = false;
  }
  if (g_run_directory.fd >= 0 || detail::private_fd_ceiling() < 64) return;
  if (!g_run_directory.adopt(::open(directory.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC))) return;
  g_run_directory_path = directory;
  detail::register_private_fd(&g_run_directory.fd);
  int fd = ::openat(g_run_directory.fd, kRunMissingFile, O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd >= 0 && g_missing_list.adopt(fd)) detail::register_private_fd(&g_missing_list.fd);
}

// The run directory's descriptor, when it is still `directory`'s; else -1.
int run_directory_fd(const std::string& directory) {
  if (g_run_directory.fd < 0 || directory != g_run_directory_path) return -1;
  return g_run_directory.still_ours() ? g_run_directory.fd : -1;
}

// The program's table gives up `slot`'s number: closed there, unregistered;
// the number stays the writer's.
void leave_program_table_locked(detail::OwnFd& slot) {
  if (slot.fd >= 0) detail::hand_over_locked(&slot.fd, slot.fd);
}

// Adopts `opened` into `slot` if it is the file `slot` had (same device
// and inode), else closes it.
void adopt_same_file(detail::OwnFd& slot, int opened) {
  detail::OwnFd was = slot;
  slot.fd = -1;
  if (was.fd < 0) {  // there was none (no list in this run)
    if (opened >= 0) ::close(opened);
    return;
  }
  if (!slot.adopt(opened)) return;
  if (slot.dev != was.dev || slot.ino != was.ino) slot.release();
}

}  // namespace

void hand_over_run_directory_locked() {
  if (g_in_writer_table || (g_run_directory.fd < 0 && g_missing_list.fd < 0)) return;
  const pid_t writer = detail::private_table_owner();
  if (!detail::can_copy_from_thread_table(writer)) return;  // a fork child could not get them
  leave_program_table_locked(g_run_directory);
  leave_program_table_locked(g_missing_list);
  g_in_writer_table = true;
  g_writer_tid = writer;
}

void lend_run_directory_for_fork() {
  auto lock = detail::private_fd_lock();
  if (!g_in_writer_table || g_lent) return;
  g_lent = true;
  g_writer_directory_fd = g_run_directory.fd;
  g_writer_list_fd = g_missing_list.fd;
  g_run_directory.fd = detail::copy_from_thread_table(g_writer_tid, g_writer_directory_fd);
  g_missing_list.fd = detail::copy_from_thread_table(g_writer_tid, g_writer_list_fd);
  detail::register_private_fd_locked(&g_run_directory.fd);
  detail::register_private_fd_locked(&g_missing_list.fd);
}

void run_directory_after_fork(bool child, bool child_traced) {
  auto lock = detail::private_fd_lock();
  if (!g_lent) return;
  g_lent = false;
  if (child && child_traced) {  // the copies are the child's, in its program table
    g_in_writer_table = false;  // until its writer takes them
    return;
  }
  leave_program_table_locked(g_run_directory);
  leave_program_table_locked(g_missing_list);
  if (child) {  // untraced: nothing of the parent's run is left in its table
    g_run_directory.fd = g_missing_list.fd = -1;
    g_in_writer_table = false;
    return;
  }
  g_run_directory.fd = g_writer_directory_fd;
  g_missing_list.fd = g_writer_list_fd;
}

void reopen_run_directory_in_writer() {
  auto lock = detail::private_fd_lock();
  if (!g_in_writer_table) return;  // in the program's table, kept in this one too
  // The last writer's table went with it (a pause for a namespace): the
  // same directory and list again, by path, in this writer's table.
  adopt_same_file(g_run_directory,
                  ::open(g_run_directory_path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  adopt_same_file(g_missing_list, g_run_directory.fd < 0
                                      ? -1
                                      : ::openat(g_run_directory.fd, kRunMissingFile,
                                                 O_WRONLY | O_APPEND | O_CLOEXEC));
  g_writer_tid = detail::private_table_owner();
}

bool is_run_directory_output(const std::string& output) {
  return !output.empty() && output.back() == '/';
}

std::string claim_run_file(const std::string& directory, bool fork_child, bool exclusive,
                           int* opened) {
  if (opened) *opened = -1;
  if (!fork_child) open_run_directory(directory);
  const int dir_fd = fork_child && opened ? run_directory_fd(directory) : -1;
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
    int fd = dir_fd >= 0 ? ::openat(dir_fd, path.c_str() + directory.size(),
                                    O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644)
                         : ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0) {
      if (dir_fd >= 0 && opened)
        *opened = fd;  // the path may not reach it (chroot): write through this
      else
        ::close(fd);
      return path;
    }
    if (errno != EEXIST) return path;  // the writer reports why it cannot open it
  }
  return stem + std::to_string(g_sequence) + program;
}

int open_in_run_directory(const std::string& directory, const std::string& path, int flags) {
  const int dir_fd = run_directory_fd(directory);
  if (dir_fd >= 0 && path.compare(0, directory.size(), directory) == 0)
    return ::openat(dir_fd, path.c_str() + directory.size(), flags, 0644);
  return ::open(path.c_str(), flags, 0644);
}

void unlink_in_run_directory(const std::string& directory, const std::string& path) {
  const int dir_fd = run_directory_fd(directory);
  if (dir_fd >= 0 && path.compare(0, directory.size(), directory) == 0)
    ::unlinkat(dir_fd, path.c_str() + directory.size(), 0);
  else
    ::unlink(path.c_str());
}

namespace {

void note_run_problem(const char* kind, const std::string& why) {
  std::string text = why;
  for (char& c : text)
    if (c == '\n' || c == '\t') c = ' ';
  std::string line = std::to_string(::getpid()) + "\t" + kind + "\t" + text + "\n";
  auto lock = detail::private_fd_lock();
  if (g_missing_list.fd < 0 || !g_missing_list.still_ours()) return;
  // One write: O_APPEND keeps the lines of several processes whole.
  [[maybe_unused]] ssize_t n = ::write(g_missing_list.fd, line.data(), line.size());
}

}  // namespace

void note_missing_trace(const std::string& why) {
  note_run_problem("missing", why);
}

void note_lost_events(const std::string& what) {
  note_run_problem("lost", what);
}

}  // namespace runtime

int detail::next_image_sequence() {
  return runtime::g_sequence + 1;
}

namespace {

// "PID\tKIND\tSEQ PATH\n" (PATH left out when null) in `line`, with tabs and
// newlines in PATH made spaces; its length.
int format_list_line(char (&line)[1024], int pid, const char* kind, int sequence,
                     const char* path) {
  int head = std::snprintf(line, sizeof line, "%d\t%s\t%d", pid, kind, sequence);
  int length = head;
  if (path) {
    line[length++] = ' ';
    int n = std::snprintf(line + length, sizeof line - length - 1, "%s", path);
    length += std::min(n, static_cast<int>(sizeof line) - length - 2);
  }
  for (int i = head; i < length; ++i)
    if (line[i] == '\n' || line[i] == '\t') line[i] = ' ';
  line[length++] = '\n';
  return length;
}

// The run's list opened again by its path, if it is still the file the
// image opened (same device and inode); else -1. System calls only.
int reopen_list_by_path() {
  using runtime::g_missing_list;
  if (runtime::g_run_directory_path.empty()) return -1;
  char path[4096];
  int n = std::snprintf(path, sizeof path, "%s%s", runtime::g_run_directory_path.c_str(),
                        runtime::kRunMissingFile);
  if (n <= 0 || n >= static_cast<int>(sizeof path)) return -1;
  int fd = static_cast<int>(
      ::syscall(SYS_openat, AT_FDCWD, path, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOCTTY));
  struct stat st;
  if (fd < 0) return -1;
  if (::fstat(fd, &st) == 0 && st.st_dev == g_missing_list.dev && st.st_ino == g_missing_list.ino)
    return fd;
  ::syscall(SYS_close, fd);
  return -1;
}

// One write of `line` to the run's list. In the writer's private table (the
// writer still runs) the number means nothing in ours: written through a
// copy, or, where the copy is refused (a vfork child is another process:
// pidfd_getfd needs ptrace access to our writer thread, which Yama's
// ptrace_scope 1 denies to a descendant), through the list opened again
// by its path. `in_vfork_child`: another process on our memory, whose
// parent thread waits in vfork: no lock (another of our threads may hold
// it) and no interposed close, only system calls, on its own copy of our
// table.
void append_to_list(const char* line, int length, bool in_vfork_child) {
  using runtime::g_missing_list;
  std::unique_lock<std::mutex> lock;
  if (!in_vfork_child) lock = detail::private_fd_lock();
  int fd = g_missing_list.fd;
  const bool copied = fd >= 0 && runtime::g_in_writer_table;
  if (copied) {
    fd = detail::copy_from_thread_table(runtime::g_writer_tid, fd);
    if (fd < 0) fd = reopen_list_by_path();
  } else if (fd >= 0 && !g_missing_list.still_ours()) {
    fd = -1;
  }
  if (fd < 0) return;
  [[maybe_unused]] ssize_t n = ::write(fd, line, static_cast<std::size_t>(length));  // one write
  if (copied) ::syscall(SYS_close, fd);
}

}  // namespace

void detail::announce_exec(const char* path) {
  announce_image(static_cast<int>(::getpid()), next_image_sequence(), path, false);
}

void detail::announce_image(int pid, int sequence, const char* path, bool in_vfork_child) {
  const int saved_errno = errno;
  // On the stack: while tracing, a heap string would be recorded as the
  // program's allocation (and a vfork child must not allocate).
  char line[1024];
  append_to_list(line, format_list_line(line, pid, "exec", sequence, path ? path : "?"),
                 in_vfork_child);
  errno = saved_errno;
}

void detail::withdraw_image(int pid, int sequence, bool in_vfork_child) {
  const int saved_errno = errno;
  char line[1024];
  append_to_list(line, format_list_line(line, pid, "exec-failed", sequence, nullptr),
                 in_vfork_child);
  errno = saved_errno;
}

}  // namespace memtrail
