// Expected (memtrail): direct 1 / 524288 (start_values_run_test).
// Exits 77 when the C.UTF-8 locale is not installed or the brk heap lies
// above 0x01010101, 78 when the leak did not cover it.
// Built without PIE and run without address randomization (setarch -R):
// the brk heap starts just above .bss, below 16 MiB. setlocale() loads
// LC_CTYPE into one malloc'd block whose last word holds the widths of the
// locale's digits in bytes: 0x01010101 in a UTF-8 locale
// (tracer/preload/glibc_locale_data.hpp). main leaks 512 KiB across that
// value: python3.11 (non-PIE, which calls setlocale at start-up) read such
// a leak possibly lost when its heap started below 16 MiB (issue 27).
#define _GNU_SOURCE
#include <locale.h>

#include "break_leak.h"

int main(void) {
  break_heap_only();
  if (setlocale(LC_ALL, "C.UTF-8") == NULL) return 77;
  const int status = leak_across_break(0x01010101);
  scrub_stack();
  return status;
}
