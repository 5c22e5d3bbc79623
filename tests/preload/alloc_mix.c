/* alloc_mix: every C heap entry point with sizes no start-up code uses, so a
 * trace's counts per size are exact; with an allocator name it also mixes
 * that allocator's own API with free() and malloc(), which aborts when the
 * tracer hands free() a block it did not make (issue 15, item 2).
 *
 *   alloc_mix [glibc|jemalloc|tcmalloc|mimalloc]
 *
 * Expected trace (sizes -> allocations): 1001 x1000, 1002 x100, 1003 x10,
 * 1004 x10, 1005 x10, 1088 x10, 1007 x10, 1008 x5, 1009 x3, 1010 x7;
 * three blocks of 1009 B leak (direct). The native API's blocks are not
 * traced, their free()s are. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct native {
  const char* name;
  const char *alloc, *release;
};
static const struct native kNatives[] = {
    {"jemalloc", "mallocx", "dallocx"},
    {"tcmalloc", "tc_malloc", "tc_free"},
    {"mimalloc", "mi_malloc", "mi_free"},
};

static unsigned long sum;

/* Not inlined, and the block escapes: the compiler may not drop a
 * malloc/free pair it can see through. */
__attribute__((noinline)) static void touch(void* p, size_t n) {
  __asm__ volatile("" : : "r"(p) : "memory");
  memset(p, 0x5a, n);
  sum += ((unsigned char*)p)[n - 1] + n;
}

/* Native alloc -> free(), malloc() -> native free: both must reach the same
 * allocator. */
static int mix_with_native(const char* allocator) {
  for (size_t i = 0; i < sizeof kNatives / sizeof kNatives[0]; ++i) {
    if (strcmp(kNatives[i].name, allocator) != 0) continue;
    void* (*alloc)(size_t, ...) = (void* (*)(size_t, ...))dlsym(RTLD_DEFAULT, kNatives[i].alloc);
    void (*release)(void*, ...) = (void (*)(void*, ...))dlsym(RTLD_DEFAULT, kNatives[i].release);
    if (alloc == NULL || release == NULL) {
      printf("alloc_mix: %s is not loaded\n", allocator);
      return 1;
    }
    for (int k = 0; k < 7; ++k) {
      void* p = alloc(1011, 0); /* mallocx takes flags: 0 */
      touch(p, 1011);
      free(p);
      void* q = malloc(1010);
      touch(q, 1010);
      release(q, 0);
    }
    return 0;
  }
  return strcmp(allocator, "glibc") == 0 ? 0 : 2;
}

void* alloc_mix_leaked[3]; /* global: the stores below are seen */

int main(int argc, char** argv) {
  const char* allocator = argc > 1 ? argv[1] : "glibc";
  for (int i = 0; i < 1000; ++i) {
    void* p = malloc(1001);
    touch(p, 1001);
    free(p);
  }
  for (int i = 0; i < 100; ++i) {
    char* p = calloc(1, 1002);
    sum += p[1001];
    free(p);
  }
  for (int i = 0; i < 10; ++i) {
    void* p = malloc(1003);
    touch(p, 1003);
    p = realloc(p, 1004);
    touch(p, 1004);
    sum += malloc_usable_size(p) >= 1004;
    free(p);
    void* a = NULL;
    if (posix_memalign(&a, 64, 1005) != 0 || ((size_t)a & 63) != 0) return 3;
    free(a);
    a = aligned_alloc(64, 1088);
    touch(a, 1088);
    free(a);
    a = memalign(32, 1007);
    touch(a, 1007);
    free(a);
    if (i < 5) {
      a = valloc(1008);
      touch(a, 1008);
      free(a);
    }
  }
  for (int i = 0; i < 3; ++i) {
    alloc_mix_leaked[i] = malloc(1009);
    touch(alloc_mix_leaked[i], 1009);
  }
  int rc = mix_with_native(allocator);
  for (int i = 0; i < 3; ++i) alloc_mix_leaked[i] = NULL; /* now lost: direct leaks */
  printf("alloc_mix: %s sum %lu\n", allocator, sum);
  return rc;
}
