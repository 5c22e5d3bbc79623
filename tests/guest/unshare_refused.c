/* An LD_PRELOAD shim that refuses unshare(CLONE_FILES) with EPERM, as a
 * sandbox may (a seccomp filter, a container runtime's policy): the
 * tracer's writer thread then cannot take a descriptor table of its own
 * (tracer/src/writer_thread.cpp, enter_own_table) and must keep working in
 * the program's. The tracer asks by the system call through glibc's
 * syscall(), which this shim interposes (it is found before libc's in
 * lookup order wherever it is in LD_PRELOAD); the glibc unshare() wrapper
 * is refused the same way. Everything else goes to the kernel as is. */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <sys/syscall.h>
#include <unistd.h>

#if !defined(__x86_64__)
#error "unshare_refused: the raw system call is written for x86-64 only"
#endif

static long raw_syscall6(long n, long a, long b, long c, long d, long e, long f) {
  register long r10 __asm__("r10") = d;
  register long r8 __asm__("r8") = e;
  register long r9 __asm__("r9") = f;
  long ret;
  __asm__ volatile("syscall"
                   : "=a"(ret)
                   : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
                   : "rcx", "r11", "memory");
  if (ret < 0 && ret > -4096) {
    errno = (int)-ret;
    return -1;
  }
  return ret;
}

static int refused(long flags) {
  return (flags & CLONE_FILES) != 0;
}

long syscall(long n, ...) {
  va_list ap;
  va_start(ap, n);
  long a[6];
  for (int i = 0; i < 6; ++i) a[i] = va_arg(ap, long);
  va_end(ap);
  if (n == SYS_unshare && refused(a[0])) {
    errno = EPERM;
    return -1;
  }
  return raw_syscall6(n, a[0], a[1], a[2], a[3], a[4], a[5]);
}

int unshare(int flags) {
  if (refused(flags)) {
    errno = EPERM;
    return -1;
  }
  return (int)raw_syscall6(SYS_unshare, flags, 0, 0, 0, 0, 0);
}
