// Shared by the non-PIE leak programs run under `setarch -R` whose leak
// must cover a given integer (aux_integers.c, locale_digits.c): the brk
// heap starts just above .bss, below the integer, and the program moves the
// break up to it itself.
#pragma once

#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "leak_common.h"

enum { kBreakLeak = 512 * 1024, kBreakPage = 4096 };

// Every block from the brk heap, and no trim: freeing the old top into its
// bins must not trim the new top (glibc does, from a top past the
// threshold) before the leak is cut from it. Call first in main.
static inline void break_heap_only(void) {
  mallopt(M_MMAP_MAX, 0);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
}

// Leaks kBreakLeak bytes across `value`: the break moves to the page before
// it, where glibc's next extension of the heap starts (it takes the gap for
// another's sbrk). 0 when the leak covers it, 77 when the break cannot move
// there (the heap lies above it), 78 when the leak landed elsewhere. In a
// function of its own: its dead frame, which scrub_stack() clears, holds
// the leak's address.
__attribute__((noinline, unused)) static int leak_across_break(uintptr_t value) {
  const uintptr_t top = (uintptr_t)sbrk(0);
  const uintptr_t want = (value & ~(uintptr_t)(kBreakPage - 1)) - kBreakPage;
  if (want <= top || sbrk((intptr_t)(want - top)) == (void*)-1) return 77;
  char* leaked = malloc(kBreakLeak);
  if (leaked == NULL || (uintptr_t)leaked > value || value >= (uintptr_t)leaked + kBreakLeak)
    return 78;
  leaked[0] = 1;
  touch(leaked);
  return 0;
}
