// 10,000 blocks of 100 KiB, one byte touched in each: the program's RSS
// stays near 10,000 pages untraced, and the tracer must not touch the rest
// of each block (issue 26, item 6). Prints the RSS in MiB (the test compares
// it with the untraced run's: within 10 % + 16 MiB).
#include <stdio.h>
#include <stdlib.h>

#include "guest_observables.h"

int main(void) {
  enum { kBlocks = 10000, kBytes = 100 * 1024 };
  static char* blocks[kBlocks];
  for (int i = 0; i < kBlocks; ++i) {
    blocks[i] = malloc(kBytes);
    if (blocks[i] == NULL) return 1;
    blocks[i][i % kBytes] = 1;
  }
  FILE* statm = fopen("/proc/self/statm", "r");
  long size = 0, resident = 0;
  if (statm == NULL || fscanf(statm, "%ld %ld", &size, &resident) != 2) return 2;
  fclose(statm);
  printf("rss_mib %ld\n", resident * 4096 / (1024 * 1024));
  guest_observe();
  for (int i = 0; i < kBlocks; ++i) free(blocks[i]);
  return 0;
}
