// `memtrail attach`'s checks before gdb is asked to attach: the process
// exists, is not traced already (by a debugger, strace, or memtrail), and
// the kernel lets this process ptrace it (Yama's ptrace_scope). Each refusal
// is one line naming the reason; `memtrail attach` exits 2 with it.
#pragma once

#include <sys/types.h>

#include <string>

namespace memtrail::cli {

// Empty when `pid` can be attached; otherwise the reason, e.g.
// "process 123 is already traced by process 45 (gdb)".
std::string attach_refusal(pid_t pid);

// The preload library is already mapped in `pid` (run under `memtrail run`
// or attached before).
bool has_memtrail_loaded(pid_t pid);

}  // namespace memtrail::cli
