// Takes the start-up snapshot of the modules' writable segments and of the
// kernel's argument block (start_values.hpp) and hands it to the exit-time
// leak scan.
#pragma once

#include "reachability.hpp"

namespace memtrail::preload {

// Call once from the preload's constructor, after the early events (the
// heap of the constructors that ran before ours) are recorded: ld.so has run
// libc's start-up, the linked libraries' constructors and the program's
// preinit_array by then, the program's own constructors and main not yet.
void take_start_snapshot();

// The snapshot, or nullptr when none was taken or this process is a forked
// child (its blocks' ages come from another session clock).
const StartValues* start_snapshot();

}  // namespace memtrail::preload
