// Expected (memtrail): direct 1 / 2000, reachable 1 (start_values_run_test).
// Exits 77 when libc's data holds no integer above the brk heap (small
// caches, or a heap placed above them), 78 when the word it chose changed.
// Built without PIE and run without address randomization (setarch -R):
// the brk heap starts just above .bss, below the integers glibc computes
// at start-up (the default thread stack size from RLIMIT_STACK, 0x800000;
// the cache sizes __x86_shared_cache_size and its kin, 0x3140000, 0x18a0000
// and 0x12f0000 where this was written). main finds the smallest word of
// libc's writable segments above the heap's top (nothing is mapped there:
// an integer, not a pointer), grows the heap with a reachable filler block
// up to it and leaks 2,000 bytes across it. Such a word made a leak
// possibly lost in about 1 run of 2,000 (issue 27); it still holds the
// value it held when the tracer started, so it cannot point at the leak.
#define _GNU_SOURCE
#include <elf.h>
#include <link.h>
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "leak_common.h"

// The integer 32 bytes into it, and under a page long: a 9,000-byte leak
// across 0x800000 (glibc's default thread stack size) also covered
// 0x801000, the stack block size in a thread's descriptor, a static TLS
// root. Over tcache's largest size, so it comes from the top chunk.
enum { kLeak = 2000, kBefore = 32 };

struct Search {
  uintptr_t low, high;  // the range the integer must lie in
  const uintptr_t* best;
};

static int find_in_libc(struct dl_phdr_info* info, size_t size, void* data) {
  (void)size;
  struct Search* s = data;
  if (info->dlpi_name == NULL || strstr(info->dlpi_name, "/libc.so") == NULL) return 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)* ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD || (ph->p_flags & PF_W) == 0) continue;
    const uintptr_t* word = (const uintptr_t*)((info->dlpi_addr + ph->p_vaddr + 7) & ~7ul);
    const uintptr_t* end = (const uintptr_t*)(info->dlpi_addr + ph->p_vaddr + ph->p_memsz);
    for (; word + 1 <= end; ++word)
      if (*word > s->low && *word < s->high && (s->best == NULL || *word < *s->best))
        s->best = word;
  }
  return 0;
}

void* g_filler;  // reachable: its start is in .bss

// The leaked block placed across `target`; NULL when malloc would not.
__attribute__((noinline)) static char* leak_across(uintptr_t target) {
  uintptr_t want = (target - kBefore) & ~(uintptr_t)15;
  size_t filler = want - (uintptr_t)sbrk(0);
  for (int tries = 0; tries < 4; ++tries) {
    g_filler = malloc(filler);
    char* leak = malloc(kLeak);
    if (leak != NULL && (uintptr_t)leak <= target && target < (uintptr_t)leak + kLeak) return leak;
    if (leak == NULL) return NULL;
    const uintptr_t got = (uintptr_t)leak;
    // Freed in reverse, both merge back into the top chunk: try again.
    free(leak);
    free(g_filler);
    g_filler = NULL;
    filler += want - got;
  }
  return NULL;
}

int main(void) {
  mallopt(M_MMAP_MAX, 0);  // every block from the brk heap
  uintptr_t top = (uintptr_t)sbrk(0);
  struct Search s = {top + 1024 * 1024, top + (1ul << 30), NULL};
  dl_iterate_phdr(find_in_libc, &s);
  if (s.best == NULL) return 77;
  const uintptr_t value = *s.best;
  char* leak = leak_across(value);
  if (leak == NULL) return 77;
  leak[0] = 1;
  touch(leak);
  leak = NULL;
  scrub_stack();
  return *s.best == value ? 0 : 78;
}
