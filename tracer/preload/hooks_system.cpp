// mmap / munmap / mremap (segment events of the "mmap" pool), dlopen /
// dlclose (module map), and _exit / _Exit (flush before the process ends
// without running exit handlers).
#include <dlfcn.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdarg>
#include <cstdint>
#include <cstdlib>

#include "memtrail/detail/recording.hpp"
#include "memtrail/detail/reentrancy.hpp"
#include "memtrail/detail/runtime_hooks.hpp"
#include "memtrail/detail/session_state.hpp"
#include "next_symbol.hpp"
#include "preload_state.hpp"
#include "program_entry.hpp"
#include "program_mappings.hpp"

using namespace memtrail::preload;

namespace {

// dlsym(RTLD_NEXT), resolved at start-up (resolve_next_functions) and on
// first use only for a call made before it. A dlsym that succeeds clears the
// calling thread's pending dlerror(): resolved later, inside the program
// (munmap from libunwind's TSD destructor at every thread exit), it took the
// program's error message away. dlsym may call calloc, which is fine: our
// calloc needs no bootstrap.
using MmapFn = void* (*)(void*, std::size_t, int, int, int, off_t);
using MunmapFn = int (*)(void*, std::size_t);
using MremapFn = void* (*)(void*, std::size_t, std::size_t, int, ...);
using ExitFn = void (*)(int);
std::atomic<MmapFn> g_mmap{nullptr};
std::atomic<MunmapFn> g_munmap{nullptr};
std::atomic<MremapFn> g_mremap{nullptr};
std::atomic<ExitFn> g_exit{nullptr};
std::atomic<ExitFn> g_Exit{nullptr};
std::atomic<void*> g_dlopen{nullptr}, g_dlclose{nullptr};

// Before main and before the program's constructors: no dlerror() of the
// program's is pending yet.
[[gnu::constructor]] void resolve_next_functions() {
  next_symbol(g_mmap, "mmap");
  next_symbol(g_munmap, "munmap");
  next_symbol(g_mremap, "mremap");
  next_symbol(g_exit, "_exit");
  next_symbol(g_Exit, "_Exit");
  next_symbol(g_dlopen, "dlopen");
  next_symbol(g_dlclose, "dlclose");
}

[[gnu::always_inline]] inline void trace_segment(memtrail::EventKind kind, const void* address,
                                                 std::size_t size) {
  memtrail::Event e;
  e.kind = kind;
  e.pool = g_mmap_pool;
  e.address = reinterpret_cast<std::uintptr_t>(address);
  e.size = size;
  e.detail = static_cast<std::uint8_t>(memtrail::SegmentDetail::whole);
  memtrail::detail::record_slow(e, 1);
}

void* real_mmap(void* addr, std::size_t length, int prot, int flags, int fd, off_t offset) {
  if (MmapFn fn = next_symbol(g_mmap, "mmap")) return fn(addr, length, prot, flags, fd, offset);
  return reinterpret_cast<void*>(syscall(SYS_mmap, addr, length, prot, flags, fd, offset));
}

// The flush that exit() gets from the recorder's exit handler, for the
// functions that skip exit handlers. Not in a vfork child: it shares our
// memory, and finishing the trace there would finish the parent's. Nor in a
// child forked without fork handlers: it says it was not traced.
void finish_trace_before_exit() {
  if (!memtrail::detail::recorder_started()) return;
  if (getpid() == g_traced_pid)
    memtrail::stop();
  else
    memtrail::detail::notice_fork_without_handlers();
}

}  // namespace

namespace memtrail::preload {

// quick_exit() runs the at_quick_exit handlers and then glibc's internal
// _exit, which no interposer sees: without this its trace was cut. Handlers
// run last-registered first, so ours, registered at start-up before any of
// the program's, runs after them: their events are in the trace too.
void finish_trace_at_quick_exit() {
  static bool registered = false;
  if (registered) return;
  registered = true;
  at_quick_exit([] { finish_trace_before_exit(); });
}

}  // namespace memtrail::preload

extern "C" {

MEMTRAIL_PROGRAM_ENTRY void* mmap(void* addr, std::size_t length, int prot, int flags, int fd,
                                  off_t offset) {
  void* p = real_mmap(addr, length, prot, flags, fd, offset);
  if (__builtin_expect(memtrail::tracing(), 0) && p != MAP_FAILED) {
    trace_segment(memtrail::EventKind::segment_reserve, p, length);
    program_mapped(p, length, prot, flags);
  }
  return p;
}

// On LP64 mmap64 is mmap; glibc exports both names.
MEMTRAIL_PROGRAM_ENTRY void* mmap64(void* addr, std::size_t length, int prot, int flags, int fd,
                                    off_t offset) {
  void* p = real_mmap(addr, length, prot, flags, fd, offset);
  if (__builtin_expect(memtrail::tracing(), 0) && p != MAP_FAILED) {
    trace_segment(memtrail::EventKind::segment_reserve, p, length);
    program_mapped(p, length, prot, flags);
  }
  return p;
}

MEMTRAIL_PROGRAM_ENTRY int munmap(void* addr, std::size_t length) {
  MunmapFn fn = next_symbol(g_munmap, "munmap");
  int rc = fn != nullptr ? fn(addr, length) : static_cast<int>(syscall(SYS_munmap, addr, length));
  if (__builtin_expect(memtrail::tracing(), 0) && rc == 0) {
    trace_segment(memtrail::EventKind::segment_release, addr, length);
    program_unmapped(addr, length);
  }
  return rc;
}

MEMTRAIL_PROGRAM_ENTRY void* mremap(void* old, std::size_t old_size, std::size_t new_size,
                                    int flags, ...) {
  void* wanted = nullptr;
  if (flags & MREMAP_FIXED) {
    va_list args;
    va_start(args, flags);
    wanted = va_arg(args, void*);
    va_end(args);
  }
  MremapFn fn = next_symbol(g_mremap, "mremap");
  void* p =
      fn != nullptr
          ? fn(old, old_size, new_size, flags, wanted)
          : reinterpret_cast<void*>(syscall(SYS_mremap, old, old_size, new_size, flags, wanted));
  if (__builtin_expect(memtrail::tracing(), 0) && p != MAP_FAILED) {
    trace_segment(memtrail::EventKind::segment_release, old, old_size);
    trace_segment(memtrail::EventKind::segment_reserve, p, new_size);
    program_remapped(old, old_size, p, new_size);
  }
  return p;
}

MEMTRAIL_PROGRAM_ENTRY [[noreturn]] void _exit(int status) {
  finish_trace_before_exit();
  if (ExitFn fn = next_symbol(g_exit, "_exit")) fn(status);
  syscall(SYS_exit_group, status);
  __builtin_unreachable();
}

MEMTRAIL_PROGRAM_ENTRY [[noreturn]] void _Exit(int status) {
  finish_trace_before_exit();
  if (ExitFn fn = next_symbol(g_Exit, "_Exit")) fn(status);
  syscall(SYS_exit_group, status);
  __builtin_unreachable();
}

// ---- dlopen / dlclose -----------------------------------------------------
//
// glibc's dlopen uses its caller's address to pick the namespace and the
// RPATH/RUNPATH ($ORIGIN) to search. A C wrapper would make *us* the caller
// and break programs that rely on their own RUNPATH (heaptrack has this bug).
// So on x86-64 the interposers are tail-jumping stubs: they tell the recorder
// the module map changed, then jump to the real function with the program's
// return address still on the stack.

// Returns the real function for the stub to jump to.
[[gnu::visibility("hidden")]] void* memtrail_before_dl(int which) {
  void* fn = which == 0 ? next_symbol(g_dlopen, "dlopen") : next_symbol(g_dlclose, "dlclose");
  memtrail::detail::notify_modules_changed();
  if (which == 1 && memtrail::tracing()) {
    // Drain now, while the library is still mapped: events whose stacks
    // point into it make the writer record it in the module table, which it
    // could no longer do after the unmap.
    memtrail::detail::ScopedInternal internal;
    memtrail::detail::flush_all_threads();
  }
  return fn;
}

}  // extern "C"

#if defined(__x86_64__)
// rdi/rsi carry the arguments; keep them across the call, keep the stack
// 16-byte aligned at the call (entry rsp is 8 mod 16; three pushes make 0).
asm(R"(
  .text
  .globl dlopen
  .type dlopen, @function
dlopen:
  .cfi_startproc
  push %rdi
  .cfi_adjust_cfa_offset 8
  push %rsi
  .cfi_adjust_cfa_offset 8
  sub $8, %rsp
  .cfi_adjust_cfa_offset 8
  xor %edi, %edi
  call memtrail_before_dl
  add $8, %rsp
  .cfi_adjust_cfa_offset -8
  pop %rsi
  .cfi_adjust_cfa_offset -8
  pop %rdi
  .cfi_adjust_cfa_offset -8
  jmp *%rax
  .cfi_endproc
  .size dlopen, .-dlopen

  .globl dlclose
  .type dlclose, @function
dlclose:
  .cfi_startproc
  push %rdi
  .cfi_adjust_cfa_offset 8
  sub $16, %rsp
  .cfi_adjust_cfa_offset 16
  mov $1, %edi
  call memtrail_before_dl
  add $16, %rsp
  .cfi_adjust_cfa_offset -16
  pop %rdi
  .cfi_adjust_cfa_offset -8
  jmp *%rax
  .cfi_endproc
  .size dlclose, .-dlclose
)");
#else
// Elsewhere: a plain wrapper (RUNPATH lookups see this library as caller).
extern "C" MEMTRAIL_PROGRAM_ENTRY void* dlopen(const char* file, int mode) {
  using Fn = void* (*)(const char*, int);
  return reinterpret_cast<Fn>(memtrail_before_dl(0))(file, mode);
}
extern "C" MEMTRAIL_PROGRAM_ENTRY int dlclose(void* handle) {
  using Fn = int (*)(void*);
  return reinterpret_cast<Fn>(memtrail_before_dl(1))(handle);
}
#endif
