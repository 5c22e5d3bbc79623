// leaker: a known-leak program for the `memtrail check` tests.
//   leaker            leaks 100 bytes from base_leak()
//   leaker extra      ... and 64 more bytes from a second site, extra_leak()
//   leaker peak N     ... and first holds N bytes at once (then frees them)
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

#define NOINLINE __attribute__((noinline))

NOINLINE void keep(void* p) {
  asm volatile("" : : "r"(p) : "memory");
}

NOINLINE void base_leak() {
  keep(std::malloc(100));
}
NOINLINE void extra_leak() {
  keep(std::malloc(64));
}

NOINLINE void hold(std::size_t bytes) {
  void* p = std::malloc(bytes);
  std::memset(p, 1, bytes);
  keep(p);
  std::free(p);
}

}  // namespace

int main(int argc, char** argv) {
  base_leak();
  if (argc > 1 && std::strcmp(argv[1], "extra") == 0) extra_leak();
  if (argc > 2 && std::strcmp(argv[1], "peak") == 0) hold(std::strtoull(argv[2], nullptr, 10));
  return 0;
}
