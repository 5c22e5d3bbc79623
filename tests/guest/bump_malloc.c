// A program with its own malloc: a bump allocator defined in the
// executable (malloc, free, calloc, realloc), which wins symbol lookup over
// any preload. BUMP_HEAP_BYTES: the heap's size (default 64 MiB; the
// program's whole life, start-up included, uses it). Prints
// what it computed and how many calls its allocator served from main on:
// traced and untraced must print the same (issue 26, item 3).
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guest_observables.h"

static unsigned char heap[64u << 20];
static size_t heap_size, heap_used;
static unsigned long mallocs, frees;
static int counting;

static void* bump(size_t n) {
  if (heap_size == 0) {  // getenv does not allocate
    const char* bytes = getenv("BUMP_HEAP_BYTES");
    heap_size = bytes ? strtoull(bytes, NULL, 10) : sizeof heap;
    if (heap_size == 0 || heap_size > sizeof heap) heap_size = sizeof heap;
  }
  size_t start = (heap_used + 15) & ~(size_t)15;
  if (n > heap_size || start > heap_size - n) {
    errno = ENOMEM;
    return NULL;
  }
  heap_used = start + n;
  if (counting) ++mallocs;
  return heap + start;
}

void* malloc(size_t n) {
  return bump(n);
}
void free(void* p) {
  if (p == NULL) return;
  // Not one of ours: a caller mixed allocators up.
  if ((unsigned char*)p < heap || (unsigned char*)p >= heap + heap_size) abort();
  if (counting) ++frees;
}
void* calloc(size_t count, size_t size) {
  void* p = bump(count * size);
  if (p) memset(p, 0, count * size);
  return p;
}
void* realloc(void* old, size_t n) {
  if (old == NULL) return bump(n);
  void* p = bump(n);
  if (p) memcpy(p, old, n);  // the heap is one buffer: reading past old is safe
  if (counting) ++frees;
  return p;
}

static void* volatile escape;  // so the compiler keeps each malloc/free pair

int main(void) {
  counting = 1;
  unsigned long sum = 0;
  for (int i = 0; i < 200; ++i) {
    unsigned* p = malloc(16);
    if (p == NULL) break;
    *p = (unsigned)i;
    sum += *p;
    escape = p;
    free(p);
  }
  char* s = realloc(NULL, 8);
  if (s) strcpy(s, "bump");
  counting = 0;
  printf("sum %lu, %s, mallocs %lu, frees %lu\n", sum, s ? s : "(null)", mallocs, frees);
  guest_observe();
  return 0;
}
