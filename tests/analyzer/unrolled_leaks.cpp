// A leak from one source line reached through several return addresses: a
// loop the compiler unrolls (three malloc calls on one line: 300, 200 and
// 100 bytes) and the same function leaking in 4 threads. A reader sees one
// call site each; the report must show one entry each (issue 20).
#include <pthread.h>

#include <cstdlib>

namespace {

__attribute__((noinline)) void keep(void* p) {
  asm volatile("" : : "r"(p) : "memory");
}

__attribute__((noinline)) void leak_unrolled() {
#pragma GCC unroll 3
  for (int i = 3; i > 0; --i) keep(std::malloc(static_cast<std::size_t>(100 * i)));
}

void* leak_in_thread(void*) {
  keep(std::malloc(512));
  return nullptr;
}

__attribute__((noinline)) void leak_in_threads() {
  pthread_t t[4];
  for (auto& th : t) pthread_create(&th, nullptr, leak_in_thread, nullptr);
  for (auto& th : t) pthread_join(th, nullptr);
}

}  // namespace

int main() {
  leak_unrolled();
  leak_in_threads();
  return 0;
}
