// Expected (Valgrind memcheck): definitely lost 1 block / 55 B; indirectly
// lost 0; possibly lost 0; still reachable 3 blocks / 600 B.
// memtrail: direct 1 / 55, indirect 0, reachable 3 / 600. LSan: Direct 1 / 55
// (LSan does not report reachable blocks).
// exit() is called two frames below hold_and_exit(), whose volatile locals
// hold the only pointers to the 100, 200 and 300 B blocks: those frames are
// live when the exit scan runs, so the blocks are reachable. The 55 B block
// was dropped by a function that returned before.
#include <stdlib.h>
#include <string.h>

#include "leak_common.h"

__attribute__((noinline)) static void leak_55(void) {
  char* p = (char*)malloc(55);
  memset(p, 5, 55);
  touch(p);
}

__attribute__((noinline, noreturn)) static void finish(int code) {
  touch(&code);
  exit(code);
}

__attribute__((noinline)) static void hold_and_exit(void) {
  void* volatile a = malloc(100);
  void* volatile b = malloc(200);
  void* volatile c = malloc(300);
  memset(a, 1, 100);
  memset(b, 2, 200);
  memset(c, 3, 300);
  leak_55();
  scrub_stack();
  finish(0);
}

int main(void) {
  hold_and_exit();
  return 1;
}
