// Expected (Valgrind memcheck): definitely lost 0; indirectly lost 0;
// possibly lost 0; still reachable 1 block / 40 B.
// memtrail: reachable 1 / 40. LSan: nothing leaked.
// A thread moves the only pointer to its block back and forth between a
// stack slot and a register while main exits (issue 27 item 1): at every
// instant the pointer is in one of the two, so a scan that reads registers
// and stack at the same instant (Valgrind's, memtrail's stop-the-world)
// always finds it; one that copies the registers first and reads the stack
// later misses it when it moved in between.
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "leak_common.h"

static volatile int g_ready;

// Moves the pointer at *held back and forth between *slot and rax forever;
// every other copy is cleared first. Written in assembly: a compiler keeps a
// copy in another register.
__attribute__((noinline)) static void dance(volatile uintptr_t* slot, uintptr_t* held) {
#if defined(__x86_64__)
  __asm__ volatile(
      "mov (%1), %%rax\n\t"
      "movq $0, (%1)\n\t"
      "xor %%edx, %%edx\n\t"
      "xor %%r8d, %%r8d\n\t"
      "xor %%r9d, %%r9d\n\t"
      "xor %%r10d, %%r10d\n\t"
      "xor %%r11d, %%r11d\n\t"
      "movl $1, g_ready(%%rip)\n"
      "1:\n\t"
      "mov %%rax, (%0)\n\t"  // in the stack slot only
      "xor %%eax, %%eax\n\t"
      "mov $64, %%ecx\n"
      "2:\n\t"
      "dec %%ecx\n\t"
      "jnz 2b\n\t"
      "mov (%0), %%rax\n\t"  // in rax only
      "movq $0, (%0)\n\t"
      "mov $64, %%ecx\n"
      "3:\n\t"
      "dec %%ecx\n\t"
      "jnz 3b\n\t"
      "jmp 1b"
      :
      : "r"(slot), "r"(held)
      : "rax", "rcx", "rdx", "r8", "r9", "r10", "r11", "memory");
#else
#error "register_dance is written for x86-64"
#endif
}

static void* dancer(void* arg) {
  (void)arg;
  uintptr_t held = (uintptr_t)malloc(40);
  memset((void*)held, 2, 40);
  volatile uintptr_t slot = 0;
  dance(&slot, &held);
  return NULL;
}

int main(void) {
  pthread_t t;
  pthread_create(&t, NULL, dancer, NULL);
  while (!g_ready) {
  }
  scrub_stack();
  return 0;
}
