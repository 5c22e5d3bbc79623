// Expected (Valgrind memcheck): definitely lost 1 block / 200,048 B (the
// Index holding the std::map); indirectly lost 5 blocks / 360 B (the tree's
// nodes); possibly lost 0; still reachable 1 block / 8 B (g_guard).
// memtrail: the same.
// LSan: differs from Valgrind: the Index and the tree's root node point at
// each other (the root's parent pointer is the map's header, 8 bytes into
// the Index), so every leaked block is pointed to by another leaked block:
// Direct 0, Indirect 6 / 200,408.
//
// A leaked cycle whose lowest-addressed block is not its first-allocated
// one (issue 27 item 5). Valgrind visits unreached blocks in address order
// and its allocator hands out rising addresses, so it names the cycle's
// first-allocated block, the Index, direct. Under glibc, a block's address
// depends on the heap's history: a chunk freed earlier (a copy of a path
// whose length moves with the working directory, say) lets a later node
// sit below the map. Here the Index is large enough for glibc to mmap it,
// above the whole heap, so its nodes always lie below it; an address-order
// leader would name a 72-byte node direct.
#include <array>
#include <cstdlib>
#include <map>

#include "leak_common.h"

struct Index {
  std::map<long, std::array<long, 4>> tree;  // 72-byte nodes
  char names[200000];                        // past glibc's mmap threshold
};

void* g_guard;

__attribute__((noinline)) static void leak_index(void) {
  auto* index = new Index;
  for (long i = 0; i < 5; ++i) index->tree[i] = {i, i, i, i};
  touch(index);
}

int main() {
  g_guard = malloc(8);
  touch(&g_guard);
  leak_index();
  scrub_stack();
  return 0;
}
