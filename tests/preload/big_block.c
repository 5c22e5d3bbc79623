// Allocates 256 MiB with malloc and grows it to 512 MiB with realloc without
// touching it, then checks that its resident set stayed small: glibc serves
// such blocks with their own mmap (fresh zero pages), and the tracer's
// zeroing of new blocks must skip them rather than commit every page.
// Exit 0 when VmRSS stayed under 64 MiB, 1 when not, 2 on an error.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long rss_kib(void) {
  FILE* f = fopen("/proc/self/status", "r");
  if (f == NULL) return -1;
  char line[256];
  long kib = -1;
  while (fgets(line, sizeof line, f) != NULL)
    if (strncmp(line, "VmRSS:", 6) == 0) kib = strtol(line + 6, NULL, 10);
  fclose(f);
  return kib;
}

int main(void) {
  char* p = (char*)malloc(256u << 20);
  if (p == NULL) return 2;
  p[0] = 1;
  char* q = (char*)realloc(p, 512u << 20);
  if (q == NULL) return 2;
  long kib = rss_kib();
  printf("big_block: rss %ld KiB\n", kib);
  free(q);
  return kib >= 0 && kib < 64 * 1024 ? 0 : 1;
}
