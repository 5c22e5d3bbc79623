// The preload's descriptor interposers meet the recorder's descriptors
// (memtrail/detail/program_fds.hpp, private_fd.hpp).
#include "memtrail/detail/program_fds.hpp"

#include <unistd.h>

#include "memtrail/detail/reentrancy.hpp"
#include "private_fd.hpp"

namespace memtrail::detail {

std::unique_lock<std::mutex> make_room_for_program_fd(int fd) {
  auto lock = private_fd_lock();
  if (!thread_is_internal() && vacate_private_fd_locked(fd)) {
    // Our old copy goes now: should the program's call fail, the number is
    // free, as it would be untraced.
    ScopedInternal ours;
    ::close(fd);
  }
  return lock;
}

bool program_may_close(int fd) {
  if (thread_is_internal()) return true;  // the tracer's own close (libunwind's, say)
  // A cheap look first: close is common, a tracer number rare.
  if (!maybe_private_fd(fd)) return true;
  auto lock = private_fd_lock();
  return !is_private_fd_locked(fd);
}

void note_pipe(int* fds) {
  if (!g_expect_unwind_pipe.load(std::memory_order_acquire)) return;
  register_private_fd(&fds[0]);
  register_private_fd(&fds[1]);
}

}  // namespace memtrail::detail
