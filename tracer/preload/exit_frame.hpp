// Where the exiting thread's live stack begins. The leak scan runs deep
// inside exit() (an atexit handler) or inside our _exit interposer; the
// frames between the scanner and the program's call to exit() -- and any
// frame that died before it, such as main's once main returned -- are not
// the program's roots: Valgrind and LeakSanitizer do not scan them.
#pragma once

#include <cstdint>

namespace memtrail::preload {

struct ExitCaller {
  bool found = false;
  // The caller's stack pointer at its call to exit() / _exit() / _Exit():
  // its frame and every frame above it are live.
  std::uintptr_t sp = 0;
  // Its callee-saved registers at that call (x86-64: rbx, rbp, r12..r15),
  // a root range of their own.
  std::uintptr_t registers[6] = {};
  int register_count = 0;
};

// Finds exit's and its kin's code and libgcc's unwinder (dlsym, dladdr and
// dlopen take the loader's lock, which at exit a program thread may hold for
// good: inside a dlopen'd constructor). Call once at start-up.
void prepare_exit_frame_lookup();

// Unwinds the current thread to the frame of libc's exit() (reached from
// main's return through __libc_start_call_main too) or of the _exit/_Exit
// interposer, and returns its caller's stack pointer and registers. found is
// false when no such frame is on the stack (the scan was reached some other
// way, or the unwind failed) or prepare_exit_frame_lookup() never ran. Takes
// no loader lock.
ExitCaller find_exit_caller();

}  // namespace memtrail::preload
