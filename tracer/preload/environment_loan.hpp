// system() and popen() start /bin/sh with glibc's internal posix_spawn and
// `environ` itself: no exec or spawn interposer sees the shell, so a program
// that took LD_PRELOAD or the MEMTRAIL_* variables out of its environment
// (clearenv, unsetenv, an `environ` array of its own) ran its shell, and all
// the shell ran, untraced and unannounced. For the length of such a call the
// preload lends `environ` an array with the tracing variables back
// (build_traced_environment: the program's entries, then the missing ones),
// and puts the program's own array back after. Calls of several threads at
// once share one loan; the last one out ends it.
#pragma once

namespace memtrail::preload {

// Lends `environ` the traced environment if it lacks the tracing variables
// (and new images are followed). True when this call took part in a loan:
// it must call end_environment_loan() once its system() or popen() returns.
bool begin_environment_loan();

// This call's part in the loan is over; the last one puts the program's
// array back, with whatever the program changed in the lent one meanwhile.
void end_environment_loan();

}  // namespace memtrail::preload
