// cxx_hello: a C++ program; libstdc++'s start-up allocation (the exception
// emergency pool, 72,704 B on GCC 5..13) happens before main.
#include <cstdio>
#include <string>

int main() {
  std::string s(100, 'x');
  std::printf("cxx_hello: %zu\n", s.size());
  return 0;
}
