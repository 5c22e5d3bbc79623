// Runs a command as on a kernel before Linux 6.9: pidfd_open(2) with
// PIDFD_THREAD fails with EINVAL (a seccomp filter, inherited by the
// command and its children). The tracer then keeps the run directory and
// its missing-trace list in the program's descriptor table, as it did
// before it could copy them out of its writer's table for a fork child.
// Prints "no seccomp: REASON" and exits 0 when the filter cannot be set.
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/syscall.h>

#include "seccomp_exec.h"

static long probe(void) {
  return syscall(SYS_pidfd_open, getpid(), O_EXCL);
}

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
  return exec_under_filter(filter, sizeof filter / sizeof filter[0], probe, EINVAL, "pidfd_open",
                           argv);
}
