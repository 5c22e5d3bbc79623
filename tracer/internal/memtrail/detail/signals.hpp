// The recorder's side of the program's signals: the sigaction the program
// sees, and fatal signals deferred while the real allocator runs. Not
// installed.
#pragma once

#include <signal.h>  // stack_t: an unnamed struct, not declarable

struct sigaction;

namespace memtrail::detail {

// sigaction() as the program sees it (the preload's sigaction and signal
// interposers call this). For the signals whose default action ends the
// process, the recorder keeps its own handler in place of SIG_DFL, to finish
// the trace and then die of the same signal; the program still reads back
// SIG_DFL, and any handler or SIG_IGN it sets replaces ours as usual.
int program_sigaction(int sig, const struct ::sigaction* act, struct ::sigaction* old) noexcept;

// sigaltstack() as the program sees it (the preload's interposer calls
// this). The recorder gives each thread an alternate stack for its handler
// (a stack overflow's SIGSEGV needs one); the program reads back its own
// setting (SS_DISABLE while ours is installed), and one it sets replaces ours.
int program_sigaltstack(const ::stack_t* ss, ::stack_t* old) noexcept;

// Set by the preload's interposers while the thread is inside the real
// allocator, which may hold one of its locks. The trace's end is written by
// the writer thread, which takes malloc's locks too (a free, mallinfo2): a
// fatal signal from outside (SIGTERM, SIGINT, ...) landing there is
// therefore kept in t_deferred_signal and raised again when the allocator
// returns (RealAllocatorCall in next_allocator.hpp), where the recorder's
// handler can finish the trace. Faults are never deferred.
extern __thread bool t_in_real_allocator __attribute__((tls_model("initial-exec")));
extern __thread int t_deferred_signal __attribute__((tls_model("initial-exec")));
// Set on the recorder's own threads (the writer, the heap probe): the leak
// scan's stop-the-world leaves them running (it needs the writer) and does
// not count their stacks as the program's roots.
extern __thread bool t_recorder_thread __attribute__((tls_model("initial-exec")));
// Raises the deferred signal (and clears it).
void raise_deferred_signal() noexcept;

}  // namespace memtrail::detail
