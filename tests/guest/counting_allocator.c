// An LD_PRELOAD allocator of the program's: forwards to glibc's __libc_*
// functions, counts the calls, and defines no malloc_usable_size.
// counting_allocator_counts() lets the program print what it made.
//
// Each block carries a 32-byte prefix of ours (glibc's block, the requested
// size, and a word where glibc keeps its chunk size holding a size no chunk
// has), so a caller that treats our blocks as glibc chunks
// (malloc_usable_size) reads nonsense, as with any other allocator's blocks.
#include <stddef.h>
#include <stdint.h>
#include <string.h>

extern void* __libc_malloc(size_t);
extern void __libc_free(void*);

static unsigned long mallocs, frees;

#define PREFIX 32
struct prefix {
  void* glibc_block;
  size_t requested;
  size_t unused;
  size_t not_a_chunk_size;
};

static void* allocate(size_t n, size_t alignment) {
  if (alignment < 16) alignment = 16;
  if (n > SIZE_MAX / 2) return NULL;
  char* block = __libc_malloc(n + PREFIX + alignment);
  if (block == NULL) return NULL;
  uintptr_t at = ((uintptr_t)block + PREFIX + alignment - 1) & ~(uintptr_t)(alignment - 1);
  struct prefix* h = (struct prefix*)at - 1;
  h->glibc_block = block;
  h->requested = n;
  h->not_a_chunk_size = (size_t)1 << 40;
  __atomic_fetch_add(&mallocs, 1, __ATOMIC_RELAXED);
  return (void*)at;
}
static struct prefix* prefix_of(void* p) {
  return (struct prefix*)p - 1;
}

void* malloc(size_t n) {
  return allocate(n, 0);
}
void free(void* p) {
  if (p == NULL) return;
  __atomic_fetch_add(&frees, 1, __ATOMIC_RELAXED);
  __libc_free(prefix_of(p)->glibc_block);
}
void* calloc(size_t count, size_t size) {
  if (size != 0 && count > SIZE_MAX / size) return NULL;
  void* p = allocate(count * size, 0);
  if (p) memset(p, 0, count * size);
  return p;
}
void* realloc(void* old, size_t n) {
  void* p = allocate(n, 0);
  if (p == NULL || old == NULL) return p;
  size_t old_n = prefix_of(old)->requested;
  memcpy(p, old, old_n < n ? old_n : n);
  free(old);
  return p;
}
void* memalign(size_t alignment, size_t n) {
  return allocate(n, alignment);
}
void* aligned_alloc(size_t alignment, size_t n) {
  return allocate(n, alignment);
}
int posix_memalign(void** out, size_t alignment, size_t n) {
  void* p = allocate(n, alignment);
  if (p == NULL) return 12;  // ENOMEM
  *out = p;
  return 0;
}
void* valloc(size_t n) {
  return allocate(n, 4096);
}

void counting_allocator_counts(unsigned long* m, unsigned long* f) {
  *m = __atomic_load_n(&mallocs, __ATOMIC_RELAXED);
  *f = __atomic_load_n(&frees, __ATOMIC_RELAXED);
}
