// Expected (Valgrind memcheck, default --leak-check-heuristics=all):
// definitely lost 0; indirectly lost 0; possibly lost 3 blocks / 208 B;
// still reachable 2 blocks / 96 B. memtrail the same. LSan: no leak (it
// takes every interior pointer as a reference).
// - g_inner points 40 bytes into `a` (128 B): a is possibly lost, and so is
//   `b` (48 B), which only a points to, though from its start: a chain with
//   an interior pointer anywhere is "possible".
// - g_whole points to the start of `d` (24 B): reachable; d's word points 16
//   bytes into `e` (32 B): possibly lost.
// - g_len points 8 bytes into `c` (72 B) whose first word is 64 = 72 - 8:
//   memcheck's "length64" heuristic makes that a start pointer: reachable.
#include <stdlib.h>
#include <string.h>

#include "leak_common.h"

char* g_inner;
void** g_whole;
char* g_len;

__attribute__((noinline)) static void set_up(void) {
  char* a = (char*)malloc(128);
  memset(a, 0, 128);
  char* b = (char*)malloc(48);
  memset(b, 0, 48);
  *(char**)a = b;
  g_inner = a + 40;

  g_whole = (void**)malloc(24);
  memset(g_whole, 0, 24);
  char* e = (char*)malloc(32);
  memset(e, 0, 32);
  g_whole[0] = e + 16;

  char* c = (char*)malloc(72);
  memset(c, 0, 72);
  *(unsigned long*)c = 64;
  g_len = c + 8;
  touch(&g_inner);
  touch(&g_whole);
  touch(&g_len);
}

int main(void) {
  set_up();
  scrub_stack();
  return 0;
}
