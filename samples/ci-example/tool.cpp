// tool: leaks `--leak N` bytes from one site, or holds `--peak N` bytes at once.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>

__attribute__((noinline)) void* allocate_report(std::size_t bytes) {
  void* p = std::malloc(bytes);
  std::memset(p, 0xa5, bytes);  // not 0: malloc+memset(0) would become calloc
  return p;
}

int main(int argc, char** argv) {
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string_view flag = argv[i];
    std::size_t n = std::strtoull(argv[i + 1], nullptr, 10);
    void* p = allocate_report(n);
    if (flag == "--peak") {
      std::free(p);
    } else if (flag != "--leak") {
      std::fprintf(stderr, "tool: unknown flag %s\n", argv[i]);
      return 2;
    }
    // --leak: p is dropped on purpose.
  }
  return 0;
}
