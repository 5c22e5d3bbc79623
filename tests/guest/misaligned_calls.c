// A program that calls the allocator as hand-written assembly may: from a
// frame without unwind information (no CFI), with the stack 8 bytes off the
// 16 the x86-64 ABI asks for at a call, and with %rbp pointing into an
// unreadable (PROT_NONE) page. glibc's allocator does not mind; the tracer's
// interposers must not either (they crashed with exit 139: the compiler
// keeps an event on the stack with aligned SSE stores, and libunwind finds
// no CFI for the caller and guesses its frame from %rbp).
//
// The same calls reach the descriptor and signal interposers.
//
// Prints what it got (and, for the parity test, guest_observables.h's
// figures); the blocks' sizes (4001..4005) are what the trace must hold.
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "guest_observables.h"

#if defined(__x86_64__)
// uintptr_t call_misaligned(fn, a, b, c, frame_pointer): fn(a, b, c) called
// with %rsp = 8 (mod 16) and %rbp = frame_pointer. No .cfi_* directives: no
// unwind information for this frame.
uintptr_t call_misaligned(void* fn, uintptr_t a, uintptr_t b, uintptr_t c, void* frame_pointer);
__asm__(
    ".text\n"
    ".globl call_misaligned\n"
    ".type call_misaligned, @function\n"
    "call_misaligned:\n"
    "  push %rbp\n"     // %rsp = 0 (mod 16)
    "  sub $8, %rsp\n"  // %rsp = 8 (mod 16): misaligned at the call
    "  mov %rdi, %rax\n"
    "  mov %rsi, %rdi\n"
    "  mov %rdx, %rsi\n"
    "  mov %rcx, %rdx\n"
    "  mov %r8, %rbp\n"
    "  call *%rax\n"
    "  add $8, %rsp\n"
    "  pop %rbp\n"
    "  ret\n"
    ".size call_misaligned, .-call_misaligned\n");

static void* unreadable_page;

static uintptr_t call(void* fn, uintptr_t a, uintptr_t b, uintptr_t c) {
  return call_misaligned(fn, a, b, c, unreadable_page);
}

int main(void) {
  unreadable_page = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (unreadable_page == MAP_FAILED) return 2;
  void* kept[5];
  kept[0] = (void*)call((void*)malloc, 4001, 0, 0);
  kept[1] = (void*)call((void*)calloc, 1, 4002, 0);
  void* moved = (void*)call((void*)malloc, 16, 0, 0);
  kept[2] = (void*)call((void*)realloc, (uintptr_t)moved, 4003, 0);
  kept[3] = NULL;
  int rc = (int)call((void*)posix_memalign, (uintptr_t)&kept[3], 64, 4004);
  kept[4] = (void*)call((void*)aligned_alloc, 64, 4005, 0);
  int all = rc == 0;
  for (int i = 0; i < 5; ++i) all = all && kept[i] != NULL;
  printf("blocks: %s\n", all ? "all five" : "missing");
  for (int i = 0; i < 5; ++i) call((void*)free, (uintptr_t)kept[i], 0, 0);
  printf("freed\n");
  // The descriptor and signal interposers are entered the same way (glibc's
  // own dup2, close and sigaction do not mind either; its pthread_getattr_np
  // does: sscanf's aligned stores crash it untraced).
  int copied = (int)call((void*)dup2, 1, 100, 0) == 100;
  copied = copied && (int)call((void*)close, 100, 0, 0) == 0;
  struct sigaction old;
  int asked = (int)call((void*)sigaction, SIGUSR2, 0, (uintptr_t)&old) == 0;
  printf("dup2 and close: %s, sigaction: %s\n", copied ? "ok" : "failed", asked ? "ok" : "failed");
  guest_observe();
  return all && copied && asked ? 0 : 1;
}
#else
int main(void) {
  puts("x86-64 only");
  guest_observe();
  return 0;
}
#endif
