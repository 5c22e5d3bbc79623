// Runs a command as on a kernel before Linux 6.9: pidfd_open(2) with
// PIDFD_THREAD fails with EINVAL (a seccomp filter, inherited by the
// command and its children). The tracer then keeps the run directory and
// its missing-trace list in the program's descriptor table, as it did
// before it could copy them out of its writer's table for a fork child.
// Prints "no seccomp: REASON" and exits 0 when the filter cannot be set.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  struct sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),  // another ABI: untouched
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_pidfd_open, 0, 3),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[1])),
      BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, O_EXCL, 0, 1),  // PIDFD_THREAD
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EINVAL),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog program = {sizeof filter / sizeof filter[0], filter};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
      prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) != 0) {
    printf("no seccomp: %s\n", strerror(errno));
    return 0;
  }
  long probe = syscall(SYS_pidfd_open, getpid(), O_EXCL);
  if (probe >= 0 || errno != EINVAL) {  // another architecture: the filter does not apply
    printf("no seccomp: the filter does not catch pidfd_open here\n");
    return 0;
  }
  execvp(argv[1], argv + 1);
  perror("execvp");
  return 127;
}
