// Expected (Valgrind memcheck): definitely lost 0; indirectly lost 0;
// possibly lost 0; still reachable 2 blocks / 48 B.
// memtrail: reachable 2 / 48. LSan: nothing leaked.
// Valgrind's multipleinheritance heuristic (issue 27 item 6): two objects of
// a class with two polymorphic bases are reached only through pointers to
// their second base sub-object, 8 bytes in. Such a pointer counts as a
// start pointer when both the object's first word and the word it points
// at are vtable addresses, so the objects are still reachable, not possibly
// lost.
#include <cstdio>

#include "leak_common.h"

struct Left {
  virtual ~Left() = default;
  virtual long left() const { return 1; }
};
struct Right {
  virtual ~Right() = default;
  virtual long right() const { return 2; }
  long value = 3;
};
struct Both : Left, Right {
  long left() const override { return 4; }
  long right() const override { return 5; }
};

Right* g_first;
Right* g_second;

__attribute__((noinline)) static void keep_by_second_base() {
  g_first = new Both;  // the Right sub-object, 8 bytes into the block
  g_second = new Both;
  touch(&g_first);
  touch(&g_second);
}

int main() {
  static_assert(sizeof(Both) == 24, "two vtable pointers and a long");
  keep_by_second_base();
  scrub_stack();
  return static_cast<int>(g_first->right() + g_second->right()) == 10 ? 0 : 1;
}
