// A daemon made the classic way: fork, setsid, fork, close every descriptor
// (stdio included), stdio on /dev/null, then its own data files, written
// while it allocates. Under a tracer that keeps a descriptor at a number
// the daemon reuses, tracer bytes would land in these files.
//
//   daemon_fds DIR   the grandchild writes DIR/pid, DIR/data0..data7
// Each data file ends up holding exactly kRounds lines "data<i> round <r>";
// the grandchild makes exactly kRounds * kPairs allocations of kSize bytes.
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum { kFiles = 8, kRounds = 40, kPairs = 250, kSize = 4321 };

static void write_text(int fd, const char* text) {
  size_t left = strlen(text);
  while (left > 0) {
    ssize_t n = write(fd, text, left);
    if (n <= 0) _exit(3);
    text += n;
    left -= (size_t)n;
  }
}

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  const char* dir = argv[1];
  pid_t child = fork();
  if (child < 0) return 1;
  if (child > 0) return 0;
  setsid();
  pid_t grandchild = fork();
  if (grandchild < 0) return 1;
  if (grandchild > 0) return 0;

  for (int fd = 0; fd < 1024; ++fd) close(fd);
  int null_fd = open("/dev/null", O_RDWR);  // 0
  dup(null_fd);                             // 1
  dup(null_fd);                             // 2
  char path[4096], line[128];
  snprintf(path, sizeof path, "%s/pid", dir);
  int pid_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  snprintf(line, sizeof line, "%d\n", (int)getpid());
  write_text(pid_fd, line);
  close(pid_fd);
  int files[kFiles];
  for (int i = 0; i < kFiles; ++i) {
    snprintf(path, sizeof path, "%s/data%d", dir, i);
    files[i] = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (files[i] < 0) return 4;
  }
  // Long enough for several of the tracer's periodic flushes (100 ms).
  for (int round = 0; round < kRounds; ++round) {
    for (int i = 0; i < kFiles; ++i) {
      snprintf(line, sizeof line, "data%d round %d\n", i, round);
      write_text(files[i], line);
    }
    for (int k = 0; k < kPairs; ++k) {
      char* volatile p = malloc(kSize);
      p[0] = (char)k;
      free(p);
    }
    struct timespec nap = {0, 10 * 1000 * 1000};
    nanosleep(&nap, NULL);
  }
  for (int i = 0; i < kFiles; ++i) close(files[i]);
  return 0;
}
