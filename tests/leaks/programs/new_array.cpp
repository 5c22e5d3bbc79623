// Expected (Valgrind memcheck): definitely lost 1 block / 168 B; indirectly
// lost 10 blocks / 160 B; possibly lost 0; still reachable 1 block / 72 B
// (Valgrind's "newarray" heuristic: the pointer is 8 B into the block).
// memtrail: direct 1 / 168, indirect 10 / 160, reachable 1 / 72.
// LSan: Direct 1 / 168, Indirect 10 / 160.
// new Obj[n] of a class with a destructor puts the element count (the array
// cookie) in the block's first 8 bytes: the block is n*16 + 8 B and the
// program's pointer is block + 8, an interior pointer. A leaked Obj[10] whose
// elements each own a new int[4]; a kept Obj[4] through a global.
#include <cstring>

#include "leak_common.h"

struct Obj {
  int* data = nullptr;
  long tag = 0;
  ~Obj() { delete[] data; }
};

Obj* g_kept;

__attribute__((noinline)) static void leak_array() {
  Obj* objs = new Obj[10];
  for (int i = 0; i < 10; ++i) {
    objs[i].data = new int[4];
    std::memset(objs[i].data, 0, 4 * sizeof(int));
  }
  touch(objs);
}

int main() {
  leak_array();
  g_kept = new Obj[4];
  touch(&g_kept);
  scrub_stack();
  return 0;
}
