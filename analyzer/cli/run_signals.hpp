// `memtrail run`'s side of signals.
//
// Signals: SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1 and SIGUSR2 sent to
// `memtrail run` go on to the program, as timeout(1) does, so a CI runner
// that stops memtrail's pid stops the program. One the terminal sent (Ctrl-C,
// Ctrl-\, a hangup: the kernel signals the whole foreground process group)
// already reached the program and is not sent twice. When the program dies
// of a signal, memtrail run dies of the same one (no core dump of its own),
// so its parent sees what it would see without memtrail; a shell reports
// 128 + N either way.
#pragma once

#include <sys/types.h>

namespace memtrail::cli {

// Before fork: blocks the forwarded signals so none is lost (or kills
// memtrail run) before the child's pid is known.
void block_forwarded_signals();
// In the child before exec: the signal mask memtrail run started with.
void restore_signal_mask();
// In the parent after fork: forwards from now on, then unblocks.
void forward_signals_to(pid_t child);

// waitpid() through interruptions; false (and a message) if it fails.
bool wait_for_program(pid_t child, int* status);

// Exit code for the program's wait status. A program killed by a signal:
// memtrail run raises the same signal on itself first (returns 128 + N only
// if that did not end it).
int exit_like_program(int status);

}  // namespace memtrail::cli
