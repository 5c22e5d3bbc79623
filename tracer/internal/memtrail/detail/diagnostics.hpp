// The tracer's own messages ("memtrail: ..."), for the user who started the
// program. Under the preload tracer (a guest in someone else's program) they
// go to descriptor 2 only while it is still the file it was when the tracer
// loaded: a program that closed stderr and reused 2 for its log (a daemon)
// must not find our lines in it, so they are then dropped. A program that
// links the recorder itself gets them on its stderr as it is.
// No descriptor is held for this (every number is one the program may count
// on), and the program's stdio `stderr` (its buffer, lock and orientation)
// is never touched. Async-signal-safe: vsnprintf into a stack buffer, one
// write(2).
#pragma once

namespace memtrail::detail {

void diagnostic(const char* format, ...) __attribute__((format(printf, 1, 2)));

// The preload tracer's start-up: from now on, messages only to the stderr
// the process had when libmemtrail.so loaded.
void guard_diagnostics();

}  // namespace memtrail::detail
