// Shared by the leak programs of tests/leaks: keeps the compiler from
// removing allocations or stores that the expected leak classes depend on.
#pragma once

// The block escapes as far as the optimizer knows: its allocation and the
// stores before this call stay, at -O0 and at -O2.
static inline void touch(const void* p) {
  __asm__ volatile("" : : "r"(p) : "memory");
}

// Zeroes 16 KiB of stack below the caller: addresses that functions which
// already returned left in their dead frames are gone. Programs that test
// something else than dead frames call it before main returns, because
// LeakSanitizer (like memtrail before issue 14) scans the exiting thread from
// its own stack pointer, and dead frames below main would then act as roots.
__attribute__((noinline, unused)) static void scrub_stack(void) {
  char buffer[16384];
  __builtin_memset(buffer, 0, sizeof buffer);
  touch(buffer);
}
