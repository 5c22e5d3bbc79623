// A call chain built without unwind information (-fno-asynchronous-unwind-
// tables, -fno-unwind-tables; frame pointers kept: see CMakeLists.txt): a
// tracer's libunwind finds no CFI for these frames, guesses each caller by
// its frame pointer and validates every address it reads that way
// (fd_listing.c). Its own file, so the program's main keeps its CFI.
#include <stdlib.h>

__attribute__((noinline)) void* innermost_without_cfi(size_t size) {
  void* volatile block = malloc(size);
  return block;
}

__attribute__((noinline)) void* middle_without_cfi(size_t size) {
  void* block = innermost_without_cfi(size);
  __asm__ volatile("" ::: "memory");  // no tail call: each frame stays
  return block;
}

__attribute__((noinline)) void* outermost_without_cfi(size_t size) {
  void* block = middle_without_cfi(size);
  __asm__ volatile("" ::: "memory");
  return block;
}
