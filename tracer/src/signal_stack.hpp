// The recorder's alternate signal stack per thread (signal_stack.cpp): room
// for the fatal-signal handler after a stack overflow.
#pragma once

namespace memtrail::runtime {

// Maps and installs one for the calling thread unless it has one already
// (its own, or ours inherited across fork). Keeps errno.
void give_thread_signal_stack();
// At thread exit: uninstalls ours (if still installed) and unmaps it.
void release_thread_signal_stack();

}  // namespace memtrail::runtime
