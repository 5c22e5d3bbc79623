// The preload's descriptor interposers meet the recorder's descriptors
// (memtrail/detail/program_fds.hpp, private_fd.hpp).
#include "memtrail/detail/program_fds.hpp"

#include <pthread.h>
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
  // libunwind's pipe: opened while the recorder initialises libunwind, or
  // reopened into the same array (registered then) after a read on it
  // failed (a program's close-all closed it).
  if (!g_expect_unwind_pipe.load(std::memory_order_acquire) && !is_registered_slot(&fds[0])) return;
  auto lock = private_fd_lock();
  register_private_fd_locked(&fds[0]);
  register_private_fd_locked(&fds[1]);
  // Above the program's limit, its count by F_GETFD, its lowest free number
  // and its close-all loops up to the limit never meet it; where there is
  // no room above, it stays where the recorder placed it (high, below).
  if (!place_above_soft_limit(fds, 2) && fds[0] < 64) {
    fds[0] = move_fd_high(fds[0]);
    fds[1] = move_fd_high(fds[1]);
  }
}

namespace {

// A fork while another thread holds the registry's lock (the writer in the
// middle of a chunk, a program thread in dup2) would leave the child's copy
// locked for good, and the child's first write waiting forever. Registered
// when libmemtrail loads, before the recorder's own fork handlers: prepare
// handlers run in reverse order, so this lock is taken after theirs (the
// writer takes the work lock, then this one).
std::unique_lock<std::mutex> g_fork_hold;  // static: no allocation in a fork handler
void release_after_fork() {
  if (g_fork_hold.owns_lock()) g_fork_hold.unlock();
}
__attribute__((constructor)) void hold_registry_across_fork() {
  pthread_atfork([] { g_fork_hold = private_fd_lock(); }, &release_after_fork, &release_after_fork);
}

}  // namespace

}  // namespace memtrail::detail
