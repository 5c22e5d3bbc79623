#include "private_fd.hpp"

#include <fcntl.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>

namespace memtrail::detail {

namespace {
// Numbers tried downwards from the ceiling before giving up: a program that
// holds all of them does not leave us a better place.
constexpr int kTries = 64;
}  // namespace

int private_fd_ceiling() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return 1024;
  return static_cast<int>(std::min<rlim_t>(limit.rlim_cur, 1024));
}

int move_fd_high(int fd) {
  int ceiling = private_fd_ceiling();
  for (int want = ceiling - 1, tries = 0; want > fd && tries < kTries; --want, ++tries) {
    // The lowest free number >= want: `want` itself unless it is taken.
    int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, want);
    if (moved < 0) continue;  // EMFILE: nothing free from `want` up to the limit
    if (moved >= ceiling) {   // above 1024 under a large limit: try lower
      ::close(moved);
      continue;
    }
    ::syscall(SYS_close, fd);  // not the preload's close: it takes the registry's lock
    return moved;
  }
  return fd;
}

bool OwnFd::adopt(int opened) {
  struct stat st;
  if (opened < 0 || ::fstat(opened, &st) != 0) {
    if (opened >= 0) ::close(opened);
    return false;
  }
  fd = move_fd_high(opened);
  dev = st.st_dev;
  ino = st.st_ino;
  return true;
}

bool OwnFd::still_ours() const {
  struct stat st;
  return fd >= 0 && ::fstat(fd, &st) == 0 && st.st_dev == dev && st.st_ino == ino;
}

namespace {
constexpr int kMaxSlots = 8;
int* g_slots[kMaxSlots];
std::mutex& slots_mutex() {
  static std::mutex m;  // trivially destructible enough: never destroyed before exit
  return m;
}
}  // namespace

std::unique_lock<std::mutex> private_fd_lock() {
  return std::unique_lock<std::mutex>(slots_mutex());
}

bool register_private_fd(int* slot) {
  auto lock = private_fd_lock();
  return register_private_fd_locked(slot);
}

bool register_private_fd_locked(int* slot) {
  for (int*& s : g_slots)
    if (s == slot) return true;
  for (int*& s : g_slots)
    if (s == nullptr) {
      s = slot;
      return true;
    }
  return false;
}

void unregister_private_fd(int* slot) {
  auto lock = private_fd_lock();
  unregister_private_fd_locked(slot);
}

void unregister_private_fd_locked(int* slot) {
  for (int*& s : g_slots)
    if (s == slot) s = nullptr;
}

int registered_private_fds_locked(int* out, int max) {
  int n = 0;
  for (int* s : g_slots)
    if (s != nullptr && *s >= 0 && n < max) out[n++] = *s;
  return n;
}

void hand_over_locked(int* slot, int private_number) {
  // The raw call: glibc's close is the preload's, which would refuse a
  // registered number (and the number is the program's from now on).
  if (*slot >= 0) ::syscall(SYS_close, *slot);
  unregister_private_fd_locked(slot);
  *slot = private_number;
}

namespace {

// Closes [low, high] in the calling thread's table: close_range, or one by
// one up to the limit where the kernel lacks it (before 5.9).
void close_numbers(unsigned low, unsigned high) {
  if (low > high) return;
  if (::syscall(SYS_close_range, low, high, 0) == 0) return;
  rlimit limit{};
  unsigned top = ::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < (1u << 20)
                     ? static_cast<unsigned>(limit.rlim_cur)
                     : (1u << 20);
  for (unsigned fd = low; fd <= high && fd < top; ++fd) ::syscall(SYS_close, fd);
}

}  // namespace

namespace {
std::atomic<pid_t> g_private_table_owner{0};

#ifndef PIDFD_THREAD
constexpr unsigned kPidfdThread = O_EXCL;  // linux/pidfd.h, Linux 6.9
#else
constexpr unsigned kPidfdThread = PIDFD_THREAD;
#endif

// A pidfd for the thread `tid` (not its process: its own table), or -1.
int thread_pidfd(pid_t tid) {
  return tid > 0 ? static_cast<int>(::syscall(SYS_pidfd_open, tid, kPidfdThread)) : -1;
}
}  // namespace

pid_t private_table_owner() {
  return g_private_table_owner.load(std::memory_order_acquire);
}

bool can_copy_from_thread_table(pid_t tid) {
  int pidfd = thread_pidfd(tid);
  if (pidfd < 0) return false;
  ::syscall(SYS_close, pidfd);
  return true;
}

int copy_from_thread_table(pid_t tid, int number) {
  if (number < 0) return -1;
  int pidfd = thread_pidfd(tid);
  if (pidfd < 0) return -1;
  // Our own thread: no ptrace permission is needed (same thread group).
  int copy = static_cast<int>(::syscall(SYS_pidfd_getfd, pidfd, number, 0));  // close-on-exec
  ::syscall(SYS_close, pidfd);
  return copy >= 0 ? move_fd_high(copy) : -1;
}

bool enter_private_table(const int* keep, int count) {
  // The system call, not glibc's unshare: that is the preload's, which
  // pauses the recorder's threads for a namespace.
  if (::syscall(SYS_unshare, CLONE_FILES) != 0) return false;
  g_private_table_owner.store(static_cast<pid_t>(::syscall(SYS_gettid)), std::memory_order_release);
  int kept[16];
  int n = 0;
  for (int i = 0; i < count && n < 16; ++i)
    if (keep[i] >= 0) kept[n++] = keep[i];
  std::sort(kept, kept + n);
  unsigned next = 0;  // the lowest number not yet closed or kept
  for (int i = 0; i < n; ++i) {
    if (kept[i] > 0) close_numbers(next, static_cast<unsigned>(kept[i]) - 1);
    next = static_cast<unsigned>(kept[i]) + 1;
  }
  close_numbers(next, ~0u);
  return true;
}

bool maybe_private_fd(int fd) {
  for (int* s : g_slots)
    if (s != nullptr && __atomic_load_n(s, __ATOMIC_RELAXED) == fd) return fd >= 0;
  return false;
}

bool is_private_fd_locked(int fd) {
  if (fd < 0) return false;
  for (int* s : g_slots)
    if (s != nullptr && *s == fd) return true;
  return false;
}

bool vacate_private_fd_locked(int fd) {
  if (!is_private_fd_locked(fd)) return false;
  // The highest free number below the ceiling (not `fd`, which is taken).
  int moved = -1;
  int ceiling = private_fd_ceiling();
  for (int want = ceiling - 1, tries = 0; want >= 0 && tries < kTries; --want, ++tries) {
    moved = ::fcntl(fd, F_DUPFD_CLOEXEC, want);
    if (moved >= 0 && moved < ceiling && moved != fd) break;
    if (moved >= 0) ::close(moved);
    moved = -1;
  }
  if (moved < 0) moved = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);  // anywhere, rather than lose it
  if (moved < 0) return true;  // nowhere to go: the program's call takes the number
  // The flags of the original stay (O_APPEND, O_NONBLOCK).
  int status = ::fcntl(fd, F_GETFL);
  if (status >= 0) ::fcntl(moved, F_SETFL, status);
  for (int* s : g_slots)
    if (s != nullptr && *s == fd) *s = moved;
  return true;
}

void OwnFd::release() {
  if (still_ours()) ::close(fd);
  fd = -1;
}

}  // namespace memtrail::detail
