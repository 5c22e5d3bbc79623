// Finds the program's call to exit() on the current stack (exit_frame.hpp).
#include "exit_frame.hpp"

#include <dlfcn.h>
#include <link.h>
#include <unwind.h>

#include <cstdint>
#include <initializer_list>

namespace memtrail::preload {
namespace {

// Deeper than any exit path: exit -> __run_exit_handlers -> the recorder's
// atexit handler -> stop -> the hook -> the scan is about a dozen frames.
constexpr int kMaxFrames = 64;

struct CodeRange {
  std::uintptr_t begin = 0, end = 0;
};

// exit, _exit, _Exit and quick_exit as the program calls them (our
// interposers) and as libc defines them: eight ranges at most.
struct ExitFunctions {
  static constexpr int kMax = 8;
  CodeRange ranges[kMax];
  int count = 0;
  void add(void* address) {
    Dl_info info;
    void* entry = nullptr;  // the symbol's ElfW(Sym)
    if (address == nullptr || count == kMax ||
        dladdr1(address, &info, &entry, RTLD_DL_SYMENT) == 0 || entry == nullptr)
      return;
    auto begin = reinterpret_cast<std::uintptr_t>(info.dli_saddr);
    CodeRange range{begin, begin + static_cast<const ElfW(Sym)*>(entry)->st_size};
    for (int i = 0; i < count; ++i)
      if (ranges[i].begin == range.begin) return;
    ranges[count++] = range;
  }
  // True when the call that returns to `ip` was made from inside one of
  // them. ip - 1: exit() ends with its call to the noreturn
  // __run_exit_handlers, so the return address is one past exit's last byte.
  bool called_from(std::uintptr_t ip) const {
    for (int i = 0; i < count; ++i)
      if (ip - 1 >= ranges[i].begin && ip - 1 < ranges[i].end) return true;
    return false;
  }
};

ExitFunctions exit_functions() {
  ExitFunctions f;
  for (const char* name : {"exit", "_exit", "_Exit", "quick_exit"}) {
    f.add(dlsym(RTLD_DEFAULT, name));
    f.add(dlsym(RTLD_NEXT, name));
  }
  return f;
}

// libgcc's unwinder, by name from libgcc_s: libunwind (which the tracer also
// links) defines the same names, and its _Unwind_Backtrace finds each
// frame's tables with dl_iterate_phdr, under the loader's lock; libgcc's uses
// _dl_find_object (glibc 2.35+), which takes no lock. A program thread that
// holds that lock (inside a dl_iterate_phdr callback) then cannot stall the
// scan.
struct Unwinder {
  _Unwind_Reason_Code (*backtrace)(_Unwind_Trace_Fn, void*) = nullptr;
  _Unwind_Ptr (*get_ip)(_Unwind_Context*) = nullptr;
  _Unwind_Word (*get_cfa)(_Unwind_Context*) = nullptr;
  _Unwind_Word (*get_gr)(_Unwind_Context*, int) = nullptr;
  bool found() const { return backtrace && get_ip && get_cfa && get_gr; }
};

Unwinder libgcc_unwinder() {
  Unwinder u;
  void* libgcc = dlopen("libgcc_s.so.1", RTLD_LAZY | RTLD_NOLOAD);
  if (libgcc == nullptr) return u;
  u.backtrace = reinterpret_cast<decltype(u.backtrace)>(dlsym(libgcc, "_Unwind_Backtrace"));
  u.get_ip = reinterpret_cast<decltype(u.get_ip)>(dlsym(libgcc, "_Unwind_GetIP"));
  u.get_cfa = reinterpret_cast<decltype(u.get_cfa)>(dlsym(libgcc, "_Unwind_GetCFA"));
  u.get_gr = reinterpret_cast<decltype(u.get_gr)>(dlsym(libgcc, "_Unwind_GetGR"));
  dlclose(libgcc);  // only drops the reference NOLOAD took
  return u;
}

struct Walk {
  const Unwinder* unwinder;
  const ExitFunctions* exit;
  ExitCaller* caller;
  int depth = 0;
  bool next_is_caller = false;
  std::uintptr_t exit_cfa = 0;
};

_Unwind_Reason_Code visit_frame(_Unwind_Context* context, void* data) {
  auto* walk = static_cast<Walk*>(data);
  if (++walk->depth > kMaxFrames) return _URC_END_OF_STACK;
  if (!walk->next_is_caller) {
    // This frame runs the function the return address is in: exit's frame
    // once the return address is inside exit. Its canonical frame address is
    // the caller's stack pointer at the call.
    std::uintptr_t ip = walk->unwinder->get_ip(context);
    if (walk->exit->called_from(ip)) {
      walk->next_is_caller = true;
      walk->exit_cfa = walk->unwinder->get_cfa(context);
    }
    return _URC_NO_REASON;
  }
#if defined(__x86_64__)
  // The caller's callee-saved registers (DWARF numbers of rbx, rbp,
  // r12..r15) as exit and its callees restore them.
  constexpr int kSaved[] = {3, 6, 12, 13, 14, 15};
  for (int reg : kSaved)
    walk->caller->registers[walk->caller->register_count++] = walk->unwinder->get_gr(context, reg);
#endif
  walk->caller->sp = walk->exit_cfa;
  walk->caller->found = true;
  return _URC_NORMAL_STOP;
}

// Filled once at start-up (prepare_exit_frame_lookup), read at exit.
Unwinder g_unwinder;
ExitFunctions g_exit_functions;

}  // namespace

void prepare_exit_frame_lookup() {
#if defined(__x86_64__)
  g_unwinder = libgcc_unwinder();
  g_exit_functions = exit_functions();
#endif
}

ExitCaller find_exit_caller() {
  ExitCaller caller;
#if defined(__x86_64__)
  if (!g_unwinder.found() || g_exit_functions.count == 0) return caller;
  Walk walk{&g_unwinder, &g_exit_functions, &caller};
  g_unwinder.backtrace(&visit_frame, &walk);
#endif
  return caller;
}

}  // namespace memtrail::preload
