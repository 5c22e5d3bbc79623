// Finds the program's call to exit() on the current stack (exit_frame.hpp).
#define UNW_LOCAL_ONLY
#include "exit_frame.hpp"

#include <dlfcn.h>
#include <libunwind.h>
#include <link.h>

#include <cstring>

namespace memtrail::preload {
namespace {

// Deeper than any exit path: exit -> __run_exit_handlers -> the recorder's
// atexit handler -> stop -> the hook -> the scan is about a dozen frames.
constexpr int kMaxFrames = 64;

// True when the call that returns to `ip` was made from inside exit, _exit,
// _Exit or quick_exit. ip - 1: exit() ends with its call to the noreturn
// __run_exit_handlers, so the return address is one past exit's last byte.
bool called_from_exit(unw_word_t ip) {
  Dl_info info;
  void* entry = nullptr;  // the symbol's ElfW(Sym)
  void* at = reinterpret_cast<void*>(ip - 1);
  if (dladdr1(at, &info, &entry, RTLD_DL_SYMENT) == 0 || info.dli_sname == nullptr ||
      entry == nullptr)
    return false;
  const auto* symbol = static_cast<const ElfW(Sym)*>(entry);
  auto offset =
      reinterpret_cast<std::uintptr_t>(at) - reinterpret_cast<std::uintptr_t>(info.dli_saddr);
  if (offset >= symbol->st_size) return false;  // nearest symbol, but not inside it
  return std::strcmp(info.dli_sname, "exit") == 0 || std::strcmp(info.dli_sname, "_exit") == 0 ||
         std::strcmp(info.dli_sname, "_Exit") == 0 ||
         std::strcmp(info.dli_sname, "quick_exit") == 0;
}

}  // namespace

ExitCaller find_exit_caller() {
  ExitCaller caller;
#if defined(__x86_64__)
  unw_context_t context;
  unw_cursor_t cursor;
  if (unw_getcontext(&context) != 0 || unw_init_local(&cursor, &context) != 0) return caller;
  bool next_is_caller = false;
  for (int depth = 0; depth < kMaxFrames && unw_step(&cursor) > 0; ++depth) {
    unw_word_t ip = 0;
    if (unw_get_reg(&cursor, UNW_REG_IP, &ip) != 0) return caller;
    if (!next_is_caller) {
      next_is_caller = called_from_exit(ip);
      continue;
    }
    // `cursor` is the caller's frame: its SP is exit's canonical frame
    // address, and its registers are those exit and its callees saved.
    unw_word_t sp = 0;
    if (unw_get_reg(&cursor, UNW_REG_SP, &sp) != 0) return caller;
    constexpr int kSaved[] = {UNW_X86_64_RBX, UNW_X86_64_RBP, UNW_X86_64_R12,
                              UNW_X86_64_R13, UNW_X86_64_R14, UNW_X86_64_R15};
    for (int reg : kSaved) {
      unw_word_t value = 0;
      if (unw_get_reg(&cursor, reg, &value) == 0) caller.registers[caller.register_count++] = value;
    }
    caller.sp = sp;
    caller.found = true;
    return caller;
  }
#endif
  return caller;
}

}  // namespace memtrail::preload
