// Lowers RLIMIT_NOFILE to 8 (soft and hard), opens /dev/null until the
// limit stops it and prints how many it got: 5 (0-2 are stdio) when no
// tracer holds a low descriptor. Then kBlocks allocations of kSize bytes,
// kept (a leak the trace must show exactly).
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

enum { kBlocks = 100, kSize = 777 };

int main(void) {
  struct rlimit limit = {8, 8};
  if (setrlimit(RLIMIT_NOFILE, &limit) != 0) return 1;
  int opened = 0;
  while (open("/dev/null", O_RDONLY) >= 0) ++opened;
  printf("opened %d (%s)\n", opened, strerror(errno));
  static void* keep[kBlocks];
  for (int i = 0; i < kBlocks; ++i) keep[i] = malloc(kSize);
  printf("allocated %d\n", keep[kBlocks - 1] ? kBlocks : 0);
  return 0;
}
