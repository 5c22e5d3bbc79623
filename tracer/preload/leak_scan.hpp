// The exit hook: classifies every heap block still live at exit and records
// one `reachability` event per block (see reachability.hpp for the rules).
#pragma once

namespace memtrail::preload {

// What the scan needs from the dynamic linker (dlsym, dladdr, dl_iterate_phdr
// take its locks, which at exit a program thread may hold for good: inside a
// dl_iterate_phdr callback or a dlopen'd constructor). Call once at start-up,
// before set_exit_hook(&run_leak_scan).
void prepare_leak_scan();

// After the early events are recorded (the preload's constructor): the
// start-up snapshot the scan compares root words with (start_snapshot.hpp).
// Nothing when prepare_leak_scan() was not called or tracing did not start.
void snapshot_for_leak_scan();

// Installed with detail::set_exit_hook(); runs after the final drain.
void run_leak_scan();

}  // namespace memtrail::preload
