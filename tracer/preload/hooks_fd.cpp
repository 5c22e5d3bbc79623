// dup2, dup3 and close: the tracer's descriptors (the trace file and the
// run directory's two until its writer thread takes them) sit at high numbers a
// program may aim at on purpose (dup2(file, 1023)). Untraced, the number was
// free; traced, the program must get it all the same, and the tracer must
// never write into, read from or close the program's file that now holds it
// (program_fds.hpp). glibc's __close and __dup2 are the real calls (no
// dlsym: it would clear the program's dlerror); dup3 is a plain system
// call in glibc too. libunwind's validation pipe is no descriptor
// (unwind_validation.hpp).
#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "memtrail/detail/program_fds.hpp"
#include "program_entry.hpp"

extern "C" int __close(int fd);
extern "C" int __dup2(int fd, int fd2);

namespace {

// A tracer number as the source is not open as far as the program knows.
bool not_the_programs(int fd) {
  if (memtrail::detail::program_may_close(fd)) return false;
  errno = EBADF;
  return true;
}

}  // namespace

extern "C" {

MEMTRAIL_PROGRAM_ENTRY int dup2(int fd, int fd2) {
  if (not_the_programs(fd)) return -1;
  if (fd == fd2) return __dup2(fd, fd2);  // no number changes hands
  auto room = memtrail::detail::make_room_for_program_fd(fd2);
  return __dup2(fd, fd2);
}

MEMTRAIL_PROGRAM_ENTRY int dup3(int fd, int fd2, int flags) {
  if (fd == fd2) {
    errno = EINVAL;
    return -1;
  }
  if (not_the_programs(fd)) return -1;
  auto room = memtrail::detail::make_room_for_program_fd(fd2);
  return static_cast<int>(syscall(SYS_dup3, fd, fd2, flags));
}

MEMTRAIL_PROGRAM_ENTRY int close(int fd) {
  if (!memtrail::detail::program_may_close(fd)) {
    errno = EBADF;
    return -1;
  }
  return __close(fd);
}

}  // extern "C"
