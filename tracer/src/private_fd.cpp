#include "private_fd.hpp"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
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
    ::close(fd);
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

void OwnFd::release() {
  if (still_ours()) ::close(fd);
  fd = -1;
}

}  // namespace memtrail::detail
