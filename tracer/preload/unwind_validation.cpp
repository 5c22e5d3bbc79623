// libunwind's validation pipe, answered without descriptors
// (unwind_validation.hpp).
//
// Why this design (issue 26): every other way keeps a descriptor or loses
// stacks. The pipe was placed above the soft RLIMIT_NOFILE, but stayed in
// /proc/self/fd (2 more than untraced), came back into the count when a
// program raised its limit, and was reopened at the lowest free numbers
// after a close-all. It cannot live in the writer thread's private table:
// every thread that unwinds validates through it. A private libunwind
// (static, built without the pipe) is a second copy of a library to build,
// ship and keep patched; libunwind 1.6 has no switch to skip validation,
// and without it the frame-pointer guess it makes for a frame without
// unwind information would read unmapped memory (SIGSEGV). libunwind
// calls pipe2, read and syscall (write, in other builds) through its GOT;
// pointing those four slots of libunwind's alone at the functions below
// (as unwind_keys.cpp does for its pthread key) changes nothing for the
// program: its own read, write, pipe2 and syscall are not interposed (no
// cost, nothing to find by dlsym), and it works in `memtrail attach` too.
#include "unwind_validation.hpp"

#include <errno.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <climits>
#include <cstdarg>
#include <cstdint>

#include "libunwind_slots.hpp"

// glibc's own read and write (exported aliases of the same entry points).
extern "C" ssize_t __read(int fd, void* buf, size_t count);
extern "C" ssize_t __write(int fd, const void* buf, size_t count);

namespace memtrail::preload {

namespace {

// Negative, far from -1 (libunwind compares with -1 before its close): the
// kernel never hands these out, so they are never anyone's descriptor.
constexpr int kReadEnd = INT_MIN + 0x4d54;  // "MT"
constexpr int kWriteEnd = kReadEnd + 1;

// rt_sigprocmask without glibc (its wrapper reads the set in user space
// first, and sets errno): the negated error number, or 0.
long raw_rt_sigprocmask(long how, const void* set, long set_size) {
#if defined(__x86_64__)
  long result;
  register long r10 asm("r10") = set_size;
  asm volatile("syscall"
               : "=a"(result)
               : "0"(static_cast<long>(SYS_rt_sigprocmask)), "D"(how), "S"(set), "d"(0L), "r"(r10)
               : "rcx", "r11", "memory");
  return result;
#else
  const int saved = errno;
  long result = ::syscall(SYS_rt_sigprocmask, how, set, nullptr, set_size);
  if (result == -1) result = -errno;
  errno = saved;
  return result;
#endif
}

// The kernel copies the new signal set from user memory before it looks
// at `how`: EFAULT when the page is unreadable, EINVAL (and nothing
// changed) when it is readable. An aligned 8 bytes never crosses a page,
// so the answer is about `addr`'s page, as the pipe's one-byte write was.
// rt_sigprocmask is a call libunwind makes anyway (its locks block
// signals): a seccomp allow-list that lets libunwind run lets this run
// too; a filter that answers it with an error reads as "unreadable" (a
// shorter stack).
bool page_readable(const void* addr) {
  constexpr long kNoSuchHow = 0x4d54;  // not SIG_BLOCK, SIG_UNBLOCK, SIG_SETMASK
  constexpr long kKernelSigsetBytes = 8;
  const auto word = reinterpret_cast<std::uintptr_t>(addr) & ~std::uintptr_t{7};
  return raw_rt_sigprocmask(kNoSuchHow, reinterpret_cast<const void*>(word), kKernelSigsetBytes) ==
         -EINVAL;
}

// The pipe's write(pipe[1], addr, 1): one byte written, or EFAULT.
long answer_write(const void* addr) {
  if (page_readable(addr)) return 1;
  errno = EFAULT;
  return -1;
}

// libunwind opens its pipe at its first use and again after a read from
// it failed: both ends are the two numbers.
int validation_pipe2(int fds[2], [[maybe_unused]] int flags) {
  fds[0] = kReadEnd;
  fds[1] = kWriteEnd;
  return 0;
}

// libunwind first reads its pipe (to empty it of the last byte written)
// and reopens the pipe unless the read returned a byte or EAGAIN: an empty
// non-blocking pipe answers EAGAIN. Its other reads (an ELF file's
// contents) go to glibc.
ssize_t validation_read(int fd, void* buf, size_t count) {
  if (fd == kReadEnd) {
    errno = EAGAIN;
    return -1;
  }
  return __read(fd, buf, count);
}

ssize_t validation_write(int fd, const void* buf, size_t count) {
  if (fd == kWriteEnd) return answer_write(buf);
  return __write(fd, buf, count);
}

// This build writes through syscall(SYS_write, pipe[1], addr, 1); its other
// system calls go on to syscall() (the preload's, then glibc's).
long validation_syscall(long number, ...) {
  va_list args;
  va_start(args, number);
  long a[6];
  for (long& arg : a) arg = va_arg(args, long);
  va_end(args);
  // The fd is an int, zero-extended into the long argument.
  if (number == SYS_write && static_cast<int>(a[0]) == kWriteEnd)
    return answer_write(reinterpret_cast<const void*>(a[1]));
  return ::syscall(number, a[0], a[1], a[2], a[3], a[4], a[5]);
}

}  // namespace

void answer_libunwinds_validation() {
  static const char* const kNames[] = {"pipe2", "read", "write", "syscall"};
  static void* const kTargets[] = {
      reinterpret_cast<void*>(&validation_pipe2), reinterpret_cast<void*>(&validation_read),
      reinterpret_cast<void*>(&validation_write), reinterpret_cast<void*>(&validation_syscall)};
  route_libunwinds_slots(kNames, kTargets, 4);
}

}  // namespace memtrail::preload
