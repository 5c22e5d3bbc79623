// Descriptors the tracer keeps open inside a traced program (the trace file,
// /proc/self/statm, libunwind's pipe) must stay out of the program's way: a
// program counts on the lowest free numbers (RLIMIT_NOFILE, dup2 targets,
// "opens 5 files under a limit of 8"), and a daemon closes every descriptor
// and then opens its own files, which get the numbers ours had. So ours sit
// near the top of the soft limit (at most 1024: the kernel sizes a
// process's descriptor table by its highest number), close-on-exec, and
// whoever writes through one first checks it is still the file it opened.
#pragma once

#include <sys/types.h>

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

}  // namespace memtrail::detail
