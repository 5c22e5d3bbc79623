// How the preload declares every function it interposes: exported, and
// entered with whatever stack alignment the caller left.
//
// The x86-64 ABI asks for %rsp = 0 (mod 16) at a call, but hand-written
// assembly may call malloc with the stack 8 bytes off. glibc's allocator
// does not mind, so such a program runs; the tracer's code, compiled to the
// ABI, keeps an event on the stack with aligned SSE stores (movaps) and
// crashed it (exit 139, issue 26). force_align_arg_pointer realigns %rsp in
// the interposer's prologue (an `and` in an rbp-based frame, CFA = %rbp +
// 16), so all the tracer's code below it runs on an aligned stack; libunwind
// traces such a frame on its fast path and the stack cache checks its saved
// %rbp (stack_cache.hpp), as for any frame-pointer frame.
#pragma once

#if defined(__x86_64__) || defined(__i386__)
#define MEMTRAIL_PROGRAM_ENTRY [[gnu::visibility("default"), gnu::force_align_arg_pointer]]
#else
#define MEMTRAIL_PROGRAM_ENTRY [[gnu::visibility("default")]]
#endif
