// MEMTRAIL_GUI_TIMING: launch-to-paint figures for the benchmarks. With the
// variable set, timing_mark("EVENT") prints
//   memtrail-gui: timing EVENT MS cpu CPU_MS
// to stderr (ms since timing_start(), and the process's CPU time, all
// threads, since it started; one decimal), once per event name.
// MEMTRAIL_GUI_TIMING=exit also makes the application quit after all-ready.
#pragma once

#include <string>

namespace memtrail::gui {

// Call first thing in main(): the clock's zero.
void timing_start();
bool timing_enabled();
bool timing_exit();  // MEMTRAIL_GUI_TIMING=exit
// Prints the line the first time `event` is marked; later marks are ignored.
// Returns whether it printed.
bool timing_mark(const std::string& event);
bool timing_marked(const std::string& event);

}  // namespace memtrail::gui
