// What the libraries loaded beside the recorder (the preload tracer, the
// CUDA injection, memtrail_gtest) tell it about the process: an exit-time
// hook, the device's free bytes, which malloc runs, changed modules and
// modules of their own. Not installed.
#pragma once

#include <cstdint>

namespace memtrail::detail {

// `fn` runs once at process exit (or stop()), after the final drain of the
// program's threads and before the trace is finished; events it records
// (e.g. with record_unwalked_past_guard) still reach the file. nullptr clears it.
void set_exit_hook(void (*fn)());

// `fn` answers the device free bytes each `sample` event carries (aux); the
// CUDA injection sets it. nullptr: samples carry 0.
void set_device_free_probe(std::uint64_t (*fn)());

// Whether malloc is glibc's (default) or another allocator's (jemalloc,
// tcmalloc, mimalloc: then samples carry no mallinfo2 heap figures, which
// would describe glibc's unused heap). Call before start().
void set_heap_is_glibc(bool glibc);

// The recorder's fork handlers around a fork that runs none (the preload's
// _Fork interposer): the child gets a trace of its own, as after fork().
void before_raw_fork();
void after_raw_fork(bool child);
// In a process whose pid is not the trace's: a child forked by system call
// (no handlers at all) stops tracing and says so; a vfork child is left
// alone (its memory is the parent's).
void notice_fork_without_handlers();

// Around a call that needs a single-threaded process (unshare of a user
// namespace): the recorder's own threads leave (after a flush; false when
// there were none) and start again.
bool pause_threads();
void resume_threads();

// Before the program installs a seccomp filter: the recorder's system calls
// (libunwind's rt_sigprocmask, the trace's writes, futexes) may be what the
// filter forbids, and a forbidden one kills the process. Tracing stops
// here: a mark in the trace and a line on stderr say so, the trace is
// finished, and the program goes on untraced.
void stop_before_seccomp();

// Re-reads the module map (dl_iterate_phdr) before the next drain. Call after
// dlopen/dlclose.
void notify_modules_changed();

// Frames whose return address lies in the module containing `address_in_module`
// are recorder machinery: they are skipped at the top of every stack.
void add_internal_code(const void* address_in_module);

}  // namespace memtrail::detail
