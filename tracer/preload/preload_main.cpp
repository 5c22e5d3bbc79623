// libmemtrail_preload.so's start-up: reads the MEMTRAIL_* variables that
// `memtrail run` set, starts the recorder with live-heap tracking, registers
// the "mmap" pool and the exit-time leak scan, and (with MEMTRAIL_FOLLOW=0)
// takes itself out of LD_PRELOAD so exec'd children run untraced.
#include <dlfcn.h>
#include <pthread.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <string_view>

#include "block_scrub.hpp"
#include "early_events.hpp"
#include "leak_scan.hpp"
#include "linker_blocks.hpp"
#include "memtrail/detail/diagnostics.hpp"
#include "memtrail/detail/environment.hpp"
#include "memtrail/detail/live_blocks.hpp"
#include "memtrail/detail/recording.hpp"
#include "memtrail/detail/reentrancy.hpp"
#include "memtrail/detail/runtime_hooks.hpp"
#include "memtrail/detail/session_state.hpp"
#include "module_roots.hpp"
#include "next_allocator.hpp"
#include "preload_state.hpp"
#include "tracer_heap.hpp"
#include "unwind_keys.hpp"
#include "unwind_validation.hpp"

namespace memtrail::preload {

std::uint32_t g_heap_pool = 0;
std::uint32_t g_mmap_pool = 0;
int g_traced_pid = 0;

namespace {

void start_preload_tracing();

void after_fork_in_child() {
  g_traced_pid = getpid();
}

bool env_is_zero(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && std::strcmp(value, "0") == 0;
}

// Removes every LD_PRELOAD entry that names this library (by its file name,
// so a relative or symlinked spelling is caught too).
void remove_self_from_ld_preload() {
  const char* current = std::getenv("LD_PRELOAD");
  if (current == nullptr) return;
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&remove_self_from_ld_preload), &info) == 0 ||
      info.dli_fname == nullptr)
    return;
  std::string_view self = info.dli_fname;
  self = self.substr(self.rfind('/') + 1);
  std::string kept;
  std::string_view rest = current;
  while (!rest.empty()) {
    std::size_t end = rest.find_first_of(": ");
    std::string_view entry = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view{} : rest.substr(end + 1);
    if (entry.empty()) continue;
    std::string_view name = entry.substr(entry.rfind('/') + 1);
    if (name == self) continue;
    if (!kept.empty()) kept += ':';
    kept += entry;
  }
  if (kept.empty()) {
    unsetenv("LD_PRELOAD");
  } else {
    setenv("LD_PRELOAD", kept.c_str(), 1);
  }
}

}  // namespace

// Starts the recorder (unless MEMTRAIL_AUTOSTART already did) with everything
// this library needs registered first. `attach_output`: `memtrail attach`
// loaded us into a running process; trace into that file, with no exit-time
// leak scan (the blocks allocated before the attach are unknown to it).
bool start_recorder(const char* attach_output) {
  // Pool registration and start-up allocate; none of that is the program's.
  detail::ScopedInternal internal;
  detail::guard_diagnostics();  // a guest: never into the program's own files
  // From here on the tracer's modules allocate from its own heap, whatever
  // malloc the program defines (tracer_heap.hpp).
  if (attach_output == nullptr) route_own_modules_to_interposers();
  emulate_libunwinds_key();        // the program keeps every pthread key
  answer_libunwinds_validation();  // and its descriptor table
  g_traced_pid = getpid();
  init_linker_range();
  detail::set_heap_is_glibc(heap_is_glibc());
  detail::add_known_environment_variable("MEMTRAIL_FOLLOW");
  bool follow = !env_is_zero("MEMTRAIL_FOLLOW");
  init_block_scrub();
  g_heap_pool = heap_pool();
  g_mmap_pool = register_pool({.name = "mmap", .kind = PoolKind::mmap, .space = MemorySpace::mmap});
  detail::set_track_live_heap(true);
  detail::add_known_environment_variable("MEMTRAIL_LEAK_SCAN");
  // Known even when the scan is off, so setting both draws no warning.
  detail::add_known_environment_variable("MEMTRAIL_SCAN_DEBUG");
  // MEMTRAIL_LEAK_SCAN=0: no exit-time leak scan (measuring its cost, or a
  // heap too large to scan); the trace's blocks are then unclassified.
  if (attach_output == nullptr && !env_is_zero("MEMTRAIL_LEAK_SCAN")) {
    prepare_leak_scan();  // the loader's locks: not at exit, where a thread may hold them
    detail::set_exit_hook(&run_leak_scan);
  }
  // The interposers' frames never top a recorded stack.
  detail::add_internal_code(reinterpret_cast<const void*>(&start_preload_tracing));
  pthread_atfork(nullptr, nullptr, &after_fork_in_child);
  if (attach_output == nullptr) finish_trace_at_quick_exit();
  if (!follow) remove_self_from_ld_preload();
  // Followed children stay traced even when the program strips the tracer
  // from an exec's environment (not for `memtrail attach`: nothing follows).
  if (follow && attach_output == nullptr) save_tracing_environment();
  if (detail::recorder_started()) return true;  // it started itself (MEMTRAIL_AUTOSTART)
  RecorderOptions options = RecorderOptions::from_environment();
  options.track_live_heap = true;
  options.follow_forks = follow;
  if (attach_output != nullptr) {
    options.output = attach_output;
    options.follow_forks = false;  // a fork of the attached process is not traced
  }
  return start(options);
}

namespace {

// Runs before main, after the libraries we depend on are initialised: the
// heap events of their constructors (and ld.so's) waited in the early
// buffer, and are recorded now, before the program's.
[[gnu::constructor]] void start_preload_tracing() {
  // Loaded by `memtrail attach` (attach_entry.cpp starts us when asked).
  if (std::getenv("MEMTRAIL_ATTACH") != nullptr) {
    unsetenv("MEMTRAIL_ATTACH");
    close_early_events(false);
    return;
  }
  try {
    start_recorder(nullptr);
  } catch (const std::exception& e) {
    // An address-space limit (ulimit -v) can leave the tracer's own heap no
    // room to map: the program must run on, untraced, not die of it.
    detail::diagnostic("memtrail: tracing could not start: %s; the program runs untraced\n",
                       e.what());
  }
  std::size_t dropped = close_early_events(detail::recorder_started());
  snapshot_for_leak_scan();  // the constructors' blocks are live blocks now
  if (dropped != 0) {
    // In the trace too: report and check must say what is missing.
    detail::record_lost(dropped, LostReason::before_startup,
                        "before start-up: made by constructors before the tracer's, beyond what "
                        "its early buffer holds");
    detail::diagnostic("memtrail: %zu heap events before start-up were not recorded\n", dropped);
  }
}

}  // namespace
}  // namespace memtrail::preload
