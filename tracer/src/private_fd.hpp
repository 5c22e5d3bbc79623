// Descriptors the tracer keeps open inside a traced program (the trace file,
// the run directory's two, until the writer's own table holds them) must
// stay out of the program's way: a
// program counts on the lowest free numbers (RLIMIT_NOFILE, dup2 targets,
// "opens 5 files under a limit of 8"), and a daemon closes every descriptor
// and then opens its own files, which get the numbers ours had. So ours sit
// near the top of the soft limit (at most 1024: the kernel sizes a
// process's descriptor table by its highest number), close-on-exec, and
// whoever writes through one first checks it is still the file it opened.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <mutex>

namespace memtrail::detail {

// One past the highest number the tracer aims for: min(soft limit, 1024).
int private_fd_ceiling();

// Moves `fd` to the highest free number below private_fd_ceiling(), with
// close-on-exec, and closes the original. Keeps `fd` when no free number
// above it is left (a tiny soft limit).
int move_fd_high(int fd);

// A descriptor the tracer opened, with the identity of its file: after a
// program closed it (and perhaps reused the number) it is no longer ours.
struct OwnFd {
  int fd = -1;
  dev_t dev = 0;
  ino_t ino = 0;

  // Takes `fd` (just opened), moved high; false (and fd closed) if fstat fails.
  bool adopt(int opened);
  // The descriptor still refers to the file adopt() saw.
  bool still_ours() const;
  // Closes it only while it is still ours: a number the program reused is
  // the program's to close. Forgets it either way.
  void release();
};

// The program may also aim at one of our numbers on purpose: dup2(file,
// 1023), close(1023). Untraced, that number was free: dup2 gets it and close
// fails with EBADF. So every descriptor variable of the tracer (the trace
// file's, the run directory's and its list's) is registered, and the
// preload's dup2/dup3/close interposers ask first: a registered number a
// program dup2s onto is moved elsewhere (every registered variable holding
// it is updated) before the program's call runs; a close of one fails as
// it would untraced. Writers through a registered descriptor hold
// private_fd_lock() from their check to their last write, so a move never
// happens in between.
std::unique_lock<std::mutex> private_fd_lock();
// `slot` holds a descriptor number (-1: none) for as long as it is
// registered. At most 8 slots; false when full.
bool register_private_fd(int* slot);
bool register_private_fd_locked(int* slot);
void unregister_private_fd(int* slot);
// A look without the lock (close is common, a tracer number rare): false
// means certainly not ours; true is confirmed under the lock.
bool maybe_private_fd(int fd);
// True when `fd` is in a registered slot (the caller holds the lock).
bool is_private_fd_locked(int fd);
// If `fd` is a registered descriptor, moves it to another free number and
// updates every slot that held it; true when it was ours. The caller holds
// the lock and then makes the program's own call.
bool vacate_private_fd_locked(int fd);
// The calling thread (the writer) gets a descriptor table of its own
// (unshare(CLONE_FILES)), then closes in it every number it copied from
// the program's except `keep` (-1s are skipped): a copy must not hold the
// program's pipes and sockets open. What the thread opens from then on is
// in no table of the program's; the program's dup2, close and close-all
// cannot reach it, nor can a fork child, which copies the forking thread's
// table. False (nothing changed) when the kernel refuses the unshare.
bool enter_private_table(const int* keep, int count);
// The thread id of the last thread that entered a private table (the
// session's writer), 0 before any: another thread may copy a descriptor
// out of that table (pidfd_getfd on a PIDFD_THREAD pidfd, Linux 6.9).
pid_t private_table_owner();
// A copy, in the calling thread's table and moved high with close-on-exec,
// of descriptor `number` of thread `tid`'s table; -1 when the kernel
// cannot (before 6.9, or `tid` gone).
int copy_from_thread_table(pid_t tid, int number);
// Whether copy_from_thread_table can work for `tid` on this kernel.
bool can_copy_from_thread_table(pid_t tid);
// The trace file's number in the program's table goes once the writer holds
// its copy: closed there (the caller holds private_fd_lock(); `slot` is
// registered) and unregistered, and `slot` gets the writer's number.
void hand_over_locked(int* slot, int private_number);
void unregister_private_fd_locked(int* slot);
// The registered numbers (the caller holds the lock), at most `max`: the
// writer keeps them in its own table too, at the same numbers (libunwind
// has no descriptor: preload/unwind_validation.hpp).
int registered_private_fds_locked(int* out, int max);

}  // namespace memtrail::detail
