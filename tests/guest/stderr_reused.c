// A daemon-like program: closes stderr, opens its own log (which gets
// descriptor 2), lowers its descriptor limit and forks a worker, then prints
// its log. The tracer's messages (here the fork child's note about the low
// descriptor limit) must not land in the program's log (issue 26, item 7c).
// argv[1]: the log's path.
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest_observables.h"

static void* volatile keep;

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  close(2);
  int log = open(argv[1], O_CREAT | O_TRUNC | O_RDWR, 0644);
  if (log != 2) return 3;
  const char line[] = "program: log opened\n";
  if (write(log, line, sizeof line - 1) < 0) return 4;
  struct rlimit limit;
  getrlimit(RLIMIT_NOFILE, &limit);
  limit.rlim_cur = 32;
  setrlimit(RLIMIT_NOFILE, &limit);
  pid_t child = fork();
  if (child == 0) {
    keep = malloc(100);
    free(keep);
    exit(0);
  }
  int status = 0;
  waitpid(child, &status, 0);
  char contents[4096] = {0};
  ssize_t n = pread(log, contents, sizeof contents - 1, 0);
  printf("log (%zd bytes):\n%s", n, n > 0 ? contents : "");
  guest_observe();
  return 0;
}
