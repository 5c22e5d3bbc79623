// Runs a command where pidfd_getfd(2) is refused with EPERM (a seccomp
// filter, inherited by the command and its children), as Yama's
// ptrace_scope 1 refuses it to a process for a thread of its parent: a
// vfork child cannot copy the run's list out of its parent's writer
// thread's table. Prints "no seccomp: REASON" and exits 0 when the filter
// cannot be set.
#define _GNU_SOURCE
#include <sys/syscall.h>

#include "seccomp_exec.h"

static long probe(void) {
  return syscall(SYS_pidfd_getfd, -1, 0, 0);
}

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  struct sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),  // another ABI: untouched
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_pidfd_getfd, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  return exec_under_filter(filter, sizeof filter / sizeof filter[0], probe, EPERM, "pidfd_getfd",
                           argv);
}
