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
  if (thread_is_internal()) return true;  // the tracer's own close
  // A cheap look first: close is common, a tracer number rare.
  if (!maybe_private_fd(fd)) return true;
  auto lock = private_fd_lock();
  return !is_private_fd_locked(fd);
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
