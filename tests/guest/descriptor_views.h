// What a program can tell of its descriptor table, the three ways
// tests/support/parity.hpp compares traced with untraced (docs/tracing.md,
// "Descriptors"): the entries of /proc/self/fd, the numbers open by
// fcntl(F_GETFD) up to the soft RLIMIT_NOFILE, and its lowest free number.
#ifndef MEMTRAIL_TESTS_GUEST_DESCRIPTOR_VIEWS_H
#define MEMTRAIL_TESTS_GUEST_DESCRIPTOR_VIEWS_H

#include <dirent.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

// Entries of /proc/self/fd, less the directory's own descriptor.
static inline int listed_descriptors(void) {
  DIR* d = opendir("/proc/self/fd");
  if (d == NULL) return -1;
  int n = 0;
  for (struct dirent* e; (e = readdir(d)) != NULL;) n += e->d_name[0] != '.';
  closedir(d);
  return n - 1;
}

// Numbers below the soft limit (at most 65536) that fcntl says are open.
static inline int open_by_fcntl(void) {
  struct rlimit limit;
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return -1;
  rlim_t top = limit.rlim_cur == RLIM_INFINITY || limit.rlim_cur > 65536 ? 65536 : limit.rlim_cur;
  int n = 0;
  for (rlim_t fd = 0; fd < top; ++fd) n += fcntl((int)fd, F_GETFD) != -1;
  return n;
}

static inline int lowest_free(void) {
  int fd = open("/dev/null", O_RDONLY);
  if (fd >= 0) close(fd);
  return fd;
}

#endif
