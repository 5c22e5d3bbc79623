// Expected (Valgrind memcheck): definitely lost 24 blocks / 1,664 B;
// indirectly lost 0; possibly lost 0; still reachable 8 blocks / 1,024 B.
// memtrail: direct 24 / 1664, indirect 0, reachable 8 / 1024.
// LSan: Direct 24 / 1664.
// 16 victims (40 B) are leaked. 16 carriers (128 B) are first filled with
// pointers to the victims and freed; 16 fresh 128 B blocks then get the
// carriers' memory back, and only their first word is written. Half of them
// are kept in a global (reachable), half are leaked (direct). The words never
// written still hold the victims' addresses from the memory's earlier life:
// Valgrind ignores them (undefined), so the victims are direct leaks, not
// reachable (through the kept blocks) or indirect (through the leaked ones).
#include <stdlib.h>
#include <string.h>

#include "leak_common.h"

enum { kCount = 16, kWords = 16 };

static void* g_victims[kCount];
void* g_kept[kCount / 2];

__attribute__((noinline)) static void make_victims(void) {
  for (int i = 0; i < kCount; ++i) {
    g_victims[i] = malloc(40);
    memset(g_victims[i], 0x11, 40);
  }
}

__attribute__((noinline)) static void fill_and_free_carriers(void) {
  void* carriers[kCount];
  for (int i = 0; i < kCount; ++i) {
    void** c = (void**)malloc(kWords * sizeof(void*));
    for (int w = 0; w < kWords; ++w) c[w] = g_victims[(i + w) % kCount];
    carriers[i] = c;
    touch(c);
  }
  for (int i = 0; i < kCount; ++i) free(carriers[i]);
  memset(carriers, 0, sizeof carriers);
  touch(carriers);
}

__attribute__((noinline)) static void reuse(void) {
  for (int i = 0; i < kCount; ++i) {
    long* r = (long*)malloc(kWords * sizeof(void*));
    r[0] = i;  // the only word written
    touch(r);
    if (i % 2 == 0) g_kept[i / 2] = r;
  }
}

int main(void) {
  make_victims();
  fill_and_free_carriers();
  memset(g_victims, 0, sizeof g_victims);
  touch(g_victims);
  reuse();
  touch(g_kept);
  scrub_stack();
  return 0;
}
