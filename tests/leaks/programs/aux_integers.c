// Expected (memtrail): direct 1 / 524288 (start_values_run_test).
// Exits 77 when the aux vector holds no integer above the brk heap's top
// (the heap placed above them), 78 when the leak did not cover it.
// Built without PIE and run without address randomization (setarch -R):
// the brk heap starts just above .bss, below the aux vector's integers.
// The kernel writes the aux vector above argv and envp at the top of the
// main thread's stack before the program runs; its AT_HWCAP (CPUID's
// feature bits, 0x1f8bfbff where this was written) lies among a non-PIE
// program's heap addresses, and made a leak of the leak-everything script
// possibly lost (issue 27). main moves the break up to that value
// itself and leaks 512 KiB across it: the word still holds the value it
// held when the tracer started, so it cannot point at the leak.
#define _GNU_SOURCE
#include <elf.h>
#include <link.h>
#include <stdint.h>

#include "break_leak.h"

// Entries whose values are numbers, not addresses.
static int holds_a_number(uint64_t type) {
  switch (type) {
    case AT_HWCAP:
    case AT_HWCAP2:
    case AT_PAGESZ:
    case AT_CLKTCK:
    case AT_MINSIGSTKSZ:
    case AT_UID:
    case AT_EUID:
    case AT_GID:
    case AT_EGID:
    case AT_FLAGS:
    case AT_PHENT:
    case AT_PHNUM:
    case AT_SECURE:
      return 1;
  }
  return 0;
}

// The smallest such value more than 1 MiB and less than 1 GiB above `top`.
static uintptr_t aux_number_above(char** envp, uintptr_t top) {
  while (*envp != NULL) ++envp;
  uintptr_t best = 0;
  for (const ElfW(auxv_t)* aux = (const ElfW(auxv_t)*)(envp + 1); aux->a_type != AT_NULL; ++aux) {
    const uintptr_t value = aux->a_un.a_val;
    if (holds_a_number(aux->a_type) && value > top + (1ul << 20) && value < top + (1ul << 30) &&
        (best == 0 || value < best))
      best = value;
  }
  return best;
}

int main(int argc, char** argv, char** envp) {
  (void)argc;
  (void)argv;
  break_heap_only();
  const uintptr_t value = aux_number_above(envp, (uintptr_t)sbrk(0));
  if (value == 0) return 77;
  const int status = leak_across_break(value);
  scrub_stack();
  return status;
}
