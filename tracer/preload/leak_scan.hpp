// The exit hook: classifies every heap block still live at exit and records
// one `reachability` event per block (see reachability.hpp for the rules).
#pragma once

namespace memtrail::preload {

// Installed with detail::set_exit_hook(); runs after the final drain.
void run_leak_scan();

}  // namespace memtrail::preload
