// A program that puts its own file on the highest descriptor numbers (issue
// 26, item 4): it dup2s one file onto 1023, 1022, ..., 900, writes a line
// through each (mallocing in between, so the tracer records and writes its
// trace meanwhile), closes them, and prints the file back. Untraced and
// traced, the output must be the same, and the trace must read back whole.
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "guest_observables.h"

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  struct rlimit limit;
  getrlimit(RLIMIT_NOFILE, &limit);
  if (limit.rlim_cur < 1024) {
    printf("RLIMIT_NOFILE below 1024\n");
    return 0;
  }
  int file = open(argv[1], O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (file < 0) return 3;
  static void* volatile blocks[64];
  int failed = 0;
  for (int fd = 1023; fd >= 900; --fd) {
    if (dup2(file, fd) != fd) {
      printf("dup2 onto %d failed\n", fd);
      ++failed;
      continue;
    }
    for (int i = 0; i < 64; ++i) blocks[i] = malloc(200 + (size_t)fd);
    for (int i = 0; i < 64; ++i) free(blocks[i]);
    char line[32];
    int n = snprintf(line, sizeof line, "fd %d\n", fd);
    if (write(fd, line, (size_t)n) != n) printf("write to %d failed\n", fd);
    usleep(200);  // the tracer's writer and sampler run meanwhile
  }
  for (int fd = 1023; fd >= 900; --fd)
    if (close(fd) != 0) printf("close %d failed\n", fd);
  // Closing a number that was never opened fails, traced or not.
  printf("close of a closed number: %s\n", close(1010) != 0 ? "fails" : "succeeds");
  lseek(file, 0, SEEK_SET);
  char buf[8192];
  ssize_t got = read(file, buf, sizeof buf - 1);
  buf[got > 0 ? got : 0] = '\0';
  fputs(buf, stdout);
  printf("dup2 failures %d\n", failed);
  guest_observe();
  return 0;
}
