// Expected (Valgrind memcheck): definitely lost 1 block / 48 B; indirectly
// lost 0; possibly lost 0; still reachable 0.
// memtrail: direct 1 / 48 (the thread's DTV is a runtime block; Valgrind
// calls it possibly lost). LSan: see leak_programs.hpp.
// A thread keeps the only pointer to its block in xmm15 and spins while main
// exits (issue 27 item 1). Valgrind scans the general registers of a thread,
// not its vector registers; memtrail follows it (docs/tracing.md).
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "leak_common.h"

static volatile int g_ready;

// Moves the pointer at *held into xmm15, clears every other copy, spins.
__attribute__((noinline)) static void hold_in_xmm(uintptr_t* held) {
#if defined(__x86_64__)
  __asm__ volatile(
      "movq (%0), %%xmm15\n\t"
      "movq $0, (%0)\n\t"
      "xor %%eax, %%eax\n\t"
      "xor %%ecx, %%ecx\n\t"
      "xor %%edx, %%edx\n\t"
      "xor %%esi, %%esi\n\t"
      "xor %%r8d, %%r8d\n\t"
      "xor %%r9d, %%r9d\n\t"
      "xor %%r10d, %%r10d\n\t"
      "xor %%r11d, %%r11d\n\t"
      "movl $1, g_ready(%%rip)\n"
      "1:\n\t"
      "pause\n\t"
      "jmp 1b"
      :
      : "D"(held)
      : "rax", "rcx", "rdx", "rsi", "r8", "r9", "r10", "r11", "xmm15", "memory");
#else
#error "vector_register is written for x86-64"
#endif
}

// Its own frame, so no callee-saved register of holder's keeps a copy.
__attribute__((noinline)) static void make_block(uintptr_t* out) {
  *out = (uintptr_t)malloc(48);
  memset((void*)*out, 6, 48);
}

static void* holder(void* arg) {
  (void)arg;
  uintptr_t held = 0;
  make_block(&held);
  scrub_stack();  // make_block's dead frame lies in hold_in_xmm's red zone
  hold_in_xmm(&held);
  return NULL;
}

int main(void) {
  pthread_t t;
  pthread_create(&t, NULL, holder, NULL);
  while (!g_ready) {
  }
  scrub_stack();
  return 0;
}
