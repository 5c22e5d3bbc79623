// iteration-leak [ITERATIONS]: a plain C++ loop with no allocator library;
// its only memtrail call is memtrail::mark("iter") at the top of each
// iteration. Each iteration leaks one 64-byte block (`new`) and frees a
// temporary. Under `memtrail run`, `memtrail report RUN --iteration-mark
// iter` reports "scope 'iter' grows 64 bytes per iteration" at leak_one().
#include <cstdlib>
#include <vector>

#include "memtrail/recorder.hpp"

namespace {

// Launders the pointer so the compiler keeps the allocation we drop.
__attribute__((noinline)) void drop(void* p) {
  asm volatile("" : : "r"(p) : "memory");
}

__attribute__((noinline)) void leak_one() {
  drop(new char[64]);  // never deleted: the bug
}

__attribute__((noinline)) int temporary_work(int i) {
  std::vector<int> scratch(32, i);  // 128 B, freed at once
  return scratch[static_cast<std::size_t>(i) % 32];
}

}  // namespace

int main(int argc, char** argv) {
  const int iterations = argc > 1 ? std::atoi(argv[1]) : 20;
  int sum = 0;
  for (int i = 0; i < iterations; ++i) {
    memtrail::mark("iter");
    leak_one();
    sum += temporary_work(i);
  }
  memtrail::mark("iter");  // closes the last iteration
  return sum == -1;
}
