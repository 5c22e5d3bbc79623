/* What a program can see of its own process, printed for the parity tests
 * (issue 26): a program run untraced and under `memtrail run` must see the
 * same. Each shape program calls guest_observe() at its end; it prints only
 * when GUEST_OBSERVE is set in the environment (so the programs' other
 * tests see their usual output), one line per figure, all starting with
 * "observe ":
 *   observe fds N          descriptors open (/proc/self/fd, less the one
 *                          reading it)
 *   observe fds_low N      of those, the ones below 900 (where a tracer
 *                          that must keep a descriptor in the table would
 *                          put it: at the top)
 *   observe keys N         pthread keys still free (created until EAGAIN,
 *                          then deleted again)
 *   observe dlerror TEXT   the pending dlerror() ("none" when none); reading
 *                          it clears it, so this comes last among dl calls
 *   observe uordblks N     mallinfo2(): bytes in use
 *   observe arena N        mallinfo2(): bytes of the main arena
 *   observe rss_kib N      VmRSS
 * Everything is measured before anything is printed: stdout's buffer and
 * the probe's own allocations must not count. Header-only C, so each
 * program stays one file. */
#ifndef MEMTRAIL_TEST_GUEST_OBSERVABLES_H
#define MEMTRAIL_TEST_GUEST_OBSERVABLES_H

#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* All open descriptors, less the one reading them; *low: those below 900. */
static int guest_observe_fds(int* low) {
  *low = -1;
  DIR* d = opendir("/proc/self/fd");
  if (d == NULL) return -1;
  int n = 0, below = 0;
  struct dirent* e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    ++n;
    below += atoi(e->d_name) < 900;
  }
  closedir(d);
  *low = below - 1; /* the directory's own descriptor is a low one */
  return n - 1;
}

static int guest_observe_free_keys(void) {
  static pthread_key_t keys[2048];
  int n = 0;
  while (n < 2048 && pthread_key_create(&keys[n], NULL) == 0) ++n;
  for (int i = 0; i < n; ++i) pthread_key_delete(keys[i]);
  return n;
}

static long guest_observe_rss_kib(void) {
  int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  static char buf[8192];
  ssize_t got = read(fd, buf, sizeof buf - 1);
  close(fd);
  buf[got > 0 ? got : 0] = '\0';
  const char* at = strstr(buf, "VmRSS:");
  return at ? strtol(at + 6, NULL, 10) : -1;
}

static void guest_observe(void) {
  if (getenv("GUEST_OBSERVE") == NULL) return;
  const char* error = dlerror();
  static char error_text[512];
  snprintf(error_text, sizeof error_text, "%s", error ? error : "none");
  struct mallinfo2 info = mallinfo2();
  int fds_low;
  int fds = guest_observe_fds(&fds_low);
  int keys = guest_observe_free_keys();
  long rss = guest_observe_rss_kib();
  printf("observe fds %d\nobserve fds_low %d\n", fds, fds_low);
  printf("observe keys %d\nobserve dlerror %s\n", keys, error_text);
  printf("observe uordblks %zu\nobserve arena %zu\nobserve rss_kib %ld\n", info.uordblks,
         info.arena, rss);
  fflush(stdout);
}

#endif
