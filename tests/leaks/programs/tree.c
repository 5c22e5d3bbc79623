// Expected (Valgrind memcheck): definitely lost 1 block / 32 B; indirectly
// lost 14 blocks / 448 B; possibly lost 0; still reachable 7 blocks / 224 B.
// memtrail: direct 1 / 32, indirect 14 / 448, reachable 7 / 224.
// LSan: Direct 1 / 32, Indirect 14 / 448.
// A complete binary tree of 15 nodes (32 B) whose root pointer is dropped:
// one direct root, the rest indirect. A 7-node tree hangs off a global.
#include <stdlib.h>

#include "leak_common.h"

struct Tree {
  struct Tree* left;
  struct Tree* right;
  long key;
  long pad;
};

struct Tree* g_kept;

static struct Tree* build(int depth, long key) {
  if (depth == 0) return NULL;
  struct Tree* t = (struct Tree*)malloc(sizeof(struct Tree));
  t->key = key;
  t->pad = 0;
  t->left = build(depth - 1, key * 2);
  t->right = build(depth - 1, key * 2 + 1);
  return t;
}

__attribute__((noinline)) static void leak_tree(void) {
  struct Tree* root = build(4, 1);
  touch(root);
}

int main(void) {
  leak_tree();
  g_kept = build(3, 1);
  touch(&g_kept);
  scrub_stack();
  return 0;
}
