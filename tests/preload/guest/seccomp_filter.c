// A program that installs a seccomp allow-list filter, then allocates and
// prints (issue 26 item 5): under the tracer, libunwind's rt_sigprocmask on
// the next malloc was not on the list, and the process died of SIGSYS.
//   seccomp_filter prctl|syscall   installs it by prctl(PR_SET_SECCOMP), or
//                                  by syscall(SYS_seccomp) as libseccomp does
#define _GNU_SOURCE
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

// Through volatile pointers: the compiler may not elide the pairs.
static void* (*volatile allocate)(size_t) = malloc;
static void (*volatile release)(void*) = free;

#define ALLOW(nr) \
  BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)

static int install_filter(int by_syscall) {
  struct sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      ALLOW(SYS_read),
      ALLOW(SYS_write),
      ALLOW(SYS_close),
      ALLOW(SYS_fstat),
      ALLOW(SYS_ioctl),
      ALLOW(SYS_newfstatat),
      ALLOW(SYS_lseek),
      ALLOW(SYS_brk),
      ALLOW(SYS_mmap),
      ALLOW(SYS_munmap),
      ALLOW(SYS_mremap),
      ALLOW(SYS_mprotect),
      ALLOW(SYS_madvise),
      ALLOW(SYS_futex),
      ALLOW(SYS_getrandom),
      ALLOW(SYS_rt_sigreturn),
      ALLOW(SYS_exit),
      ALLOW(SYS_exit_group),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
  };
  struct sock_fprog prog = {sizeof filter / sizeof filter[0], filter};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return -1;
  if (by_syscall) return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
  return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

int main(int argc, char** argv) {
  int by_syscall = argc > 1 && argv[1][0] == 's';
  for (int i = 0; i < 1000; i++) release(allocate(40 + (size_t)i));
  fflush(stdout);
  if (install_filter(by_syscall) != 0) {
    printf("no filter installed\n");
    return 1;
  }
  long sum = 0;
  for (int i = 0; i < 1000; i++) {
    char* p = allocate(40 + (size_t)i);
    p[0] = (char)(i & 0x7f);
    sum += p[0];
    release(p);
  }
  printf("filter installed, sum %ld\n", sum);
  return 0;
}
