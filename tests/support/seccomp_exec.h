// Runs a command under a seccomp filter that refuses one system call, as an
// older kernel or a stricter ptrace policy would: the wrappers of
// tests/guest and tests/lost that make the tracer take its fallback paths.
#pragma once

#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

// Installs `filter` (inherited by the command and its children), checks with
// `probe` that the call is now refused with `refused_errno`, and execs
// argv[1...]. Prints "no seccomp: REASON" and exits 0 when the filter cannot
// be set or does not apply on this architecture, so the tests can skip.
static int exec_under_filter(struct sock_filter* filter, unsigned short count, long (*probe)(void),
                             int refused_errno, const char* call, char** argv) {
  struct sock_fprog program = {count, filter};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
      prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) != 0) {
    printf("no seccomp: %s\n", strerror(errno));
    return 0;
  }
  if (probe() >= 0 || errno != refused_errno) {
    printf("no seccomp: the filter does not catch %s here\n", call);
    return 0;
  }
  execvp(argv[1], argv + 1);
  perror("execvp");
  return 127;
}
