// A program that writes 2 MiB of its own output onto a nearly full file
// system (issue 26, item 5) while it allocates: untraced it fits; traced,
// the trace must leave it the space. Argument: the output file. Each of 32
// rounds writes 64 KiB, then makes 7,000 allocations of varied sizes (half
// kept until the next round) and pauses, so the trace grows as it goes.
// Prints "wrote N bytes" or the write's error (exit 1).
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { kRounds = 32, kChunk = 64 * 1024, kAllocs = 7000 };

static void* g_kept[kAllocs];

static void allocate_round(unsigned* seed) {
  for (int i = 0; i < kAllocs; ++i) {
    *seed = *seed * 1103515245u + 12345u;
    void* p = malloc(16 + (*seed >> 16) % 2000);
    if (i % 2) {
      free(g_kept[i]);
      g_kept[i] = p;
    } else {
      free(p);
    }
  }
}

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) {
    printf("open failed: %s\n", strerror(errno));
    return 1;
  }
  static char chunk[kChunk];
  memset(chunk, 'x', sizeof chunk);
  unsigned seed = 1;
  long written = 0;
  for (int round = 0; round < kRounds; ++round) {
    if (write(fd, chunk, sizeof chunk) != (ssize_t)sizeof chunk) {
      printf("write failed after %ld bytes: %s\n", written, strerror(errno));
      return 1;
    }
    written += kChunk;
    allocate_round(&seed);
    usleep(30 * 1000);  // the writer flushes what it has
  }
  close(fd);
  for (int i = 0; i < kAllocs; ++i) free(g_kept[i]);
  printf("wrote %ld bytes\n", written);
  return 0;
}
