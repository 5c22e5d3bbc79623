// The entry points `memtrail attach` calls through gdb in a running process,
// after dlopen'ing this library there (its constructor then does nothing:
// MEMTRAIL_ATTACH was set):
//
//   memtrail_attach_start(path)  start the recorder into `path`, mark the
//                                trace as attached, point the loaded modules'
//                                allocation GOT slots at our interposers
//   memtrail_attach_stop()       write the slots back, finish the trace
//
// While attached, a thread of ours patches the modules that dlopen adds
// (polling dl_iterate_phdr's load count every 20 ms: what a new library
// allocates in its first milliseconds, constructors included, is missed).
//
// The process keeps running either way; the library stays loaded (a thread
// may still be inside an interposer, or hold a copied function pointer).
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include <atomic>

#include <cstdio>
#include <string>

#include "early_events.hpp"
#include "got_patch.hpp"
#include "memtrail/recorder.hpp"
#include "preload_state.hpp"
#include "program_entry.hpp"

using namespace memtrail;
using namespace memtrail::preload;

namespace {

// The attach mark: the analyzer reads it as "blocks allocated before this
// point are unknown" (MarkDetail::attach).
void record_attach_mark() {
  Event e;
  e.kind = EventKind::mark;
  e.detail = static_cast<std::uint8_t>(MarkDetail::attach);
  e.size = static_cast<std::uint64_t>(getpid());
  e.aux = intern_string("memtrail attach: blocks allocated before this point are unknown");
  detail::record_slow(e, 0);
}

std::atomic<bool> g_watching{false};
pthread_t g_watcher;

void* watch_new_modules(void*) {
  pthread_setname_np(pthread_self(), "memtrail-attach");
  int seen = module_generation();
  while (g_watching.load(std::memory_order_acquire)) {
    timespec tick{0, 20'000'000};
    nanosleep(&tick, nullptr);
    int now = module_generation();
    if (now != seen) {
      seen = now;
      patch_allocation_slots();
    }
  }
  return nullptr;
}

}  // namespace

extern "C" {

// 0 tracing; 1 the trace file could not be created; 2 no interposer found;
// 3 already tracing.
MEMTRAIL_PROGRAM_ENTRY int memtrail_attach_start(const char* output) {
  if (tracing()) return 3;
  if (!start_recorder(output)) return 1;
  record_attach_mark();
  if (patch_allocation_slots() < 0) {
    stop();
    return 2;
  }
  g_watching.store(true, std::memory_order_release);
  if (pthread_create(&g_watcher, nullptr, &watch_new_modules, nullptr) != 0)
    g_watching.store(false, std::memory_order_release);
  return 0;
}

// Number of GOT slots written back (>= 0).
MEMTRAIL_PROGRAM_ENTRY int memtrail_attach_stop() {
  if (g_watching.exchange(false, std::memory_order_acq_rel)) pthread_join(g_watcher, nullptr);
  int restored = restore_allocation_slots();
  stop();
  return restored;
}

}  // extern "C"
