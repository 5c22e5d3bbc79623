// memtrail recorder: the public client API.
//
// Programs (and the allocator stack) report memory events here; the recorder
// captures stacks, buffers events per thread without locks and writes a .mtr
// trace from a background writer thread.
//
//   memtrail::start("run-%p.mtr");          // or MEMTRAIL_OUTPUT=run.mtr in the environment
//   auto pool = memtrail::register_pool({.name = "activations", .kind =
//   memtrail::PoolKind::caching}); memtrail::record_alloc(pool, ptr, granted, requested);
//   memtrail::record_free(pool, ptr, granted);
//   memtrail::stop();
//
// When tracing is off every record_* call costs one predictable branch.
// All functions are thread-safe and async-signal-unsafe.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>

#include "memtrail/c_api.h"
#include "memtrail/event.hpp"

namespace memtrail {

struct RecorderOptions {
  // Output path; "%p" expands to the pid, "%h" to the host name.
  std::string output = "memtrail-%p.mtr";
  bool stacks = true;
  int stack_depth = 64;                   // frames kept per stack, innermost first
  std::uint32_t sample_interval_ms = 10;  // 0 = no periodic `sample` events
  std::uint32_t flush_interval_ms = 100;  // the most a SIGKILL can lose
  // Pools whose live blocks the writer tracks, so live_blocks() can answer
  // (the preload tracer sets this for the heap).
  bool track_live_heap = false;
  // A fork child starts its own trace ("%p" in the name). false: the child
  // runs untraced (`memtrail run --no-follow`; the preload tracer sets it).
  bool follow_forks = true;
  // Per-thread validated cache of unwound call chains (stack_cache.hpp):
  // same stacks, fewer unwinds. false: every event unwinds (MEMTRAIL_STACK_CACHE=0).
  bool stack_cache = true;

  // Fills the options from MEMTRAIL_* environment variables:
  // MEMTRAIL_OUTPUT, MEMTRAIL_STACKS (0/1), MEMTRAIL_STACK_DEPTH,
  // MEMTRAIL_SAMPLE_MS, MEMTRAIL_FLUSH_MS, MEMTRAIL_STACK_CACHE (0/1). Unknown MEMTRAIL_* keys are
  // reported on stderr by name.
  static RecorderOptions from_environment();
};

namespace detail {
extern std::atomic<bool> g_tracing;
// By reference: a by-value Event is copied into the argument area with
// wide loads of the fields the caller just stored one by one, a
// store-forwarding stall on every traced malloc.
void record_slow(const Event& event, int skip_frames);

// Return address of the outermost allocator entry point on this thread (see
// MEMTRAIL_ALLOCATOR_ENTRY); nullptr outside one. initial-exec, as the
// recorder's other thread-locals: read on every traced alloc, and a
// general-dynamic access is a __tls_get_addr call.
extern __thread const void* t_allocator_entry __attribute__((tls_model("initial-exec")));
class AllocatorEntry {
 public:
  // Costs one branch when not tracing.
  explicit AllocatorEntry(const void* return_address) noexcept
      : owner_(__builtin_expect(g_tracing.load(std::memory_order_relaxed), 0) &&
               !t_allocator_entry) {
    if (owner_) t_allocator_entry = return_address;
  }
  ~AllocatorEntry() {
    if (owner_) t_allocator_entry = nullptr;
  }
  AllocatorEntry(const AllocatorEntry&) = delete;
  AllocatorEntry& operator=(const AllocatorEntry&) = delete;

 private:
  bool owner_;
};

// Registers an inline function that only forwards to an allocator entry
// point (std::pmr::memory_resource::allocate): where a program keeps an
// out-of-line copy of it (-O0), a pool event's stack starts at the copy's
// caller, as it does where the forwarder is inlined.
void add_forwarder(const void* function_start);
}  // namespace detail

// Put first in an allocator's public entry points (a pool's malloc/free, a
// memory_resource's do_allocate/do_deallocate): stacks recorded until it
// returns start at ITS caller, so the pool's own frames never top a stack
// whatever its internal call depth. Nested entries: the outermost wins.
#define MEMTRAIL_ALLOCATOR_ENTRY() \
  ::memtrail::detail::AllocatorEntry memtrail_allocator_entry_(__builtin_return_address(0))

// True while a trace is being recorded.
inline bool tracing() noexcept {
  return detail::g_tracing.load(std::memory_order_relaxed);
}

// Starts recording into `options.output` (or `path`). Returns false and
// prints one line on stderr if the file cannot be created. Registers the
// fork, exit and fatal-signal handlers that flush the trace.
bool start(const RecorderOptions& options);
bool start(const std::string& path);
// Flushes everything and closes the trace. Safe to call twice.
void stop();
// Pushes every thread's buffered events to the file now.
void flush();

// Side tables. Ids are stable for the life of the process.
std::uint32_t register_pool(const PoolInfo& info);  // info.id is ignored
std::uint32_t register_scope(std::string_view name, ScopeKind kind, std::uint32_t pool);
std::uint32_t intern_string(std::string_view text);
void set_thread_name(std::string_view name);

// The pool id of the process heap ("malloc", PoolKind::heap); registered on
// first use.
std::uint32_t heap_pool();

// The record_* wrappers below are always inlined, even at -O0: the recorder
// skips only libmemtrail.so's own frames (by address), and an out-of-line
// copy of a wrapper in the caller's module would top every stack it records.

// Generic entry: fills time, thread and (if enabled) stack; `skip_frames`
// frames above the caller are not recorded.
[[gnu::always_inline]] inline void record(Event event, int skip_frames = 0) {
  if (__builtin_expect(tracing(), 0)) detail::record_slow(event, skip_frames);
}

[[gnu::always_inline]] inline void record_alloc(std::uint32_t pool, const void* address,
                                                std::uint64_t size, std::uint64_t requested,
                                                AllocFn fn = AllocFn::pool) {
  if (__builtin_expect(tracing(), 0)) {
    Event e;
    e.kind = EventKind::alloc;
    e.pool = pool;
    e.address = reinterpret_cast<std::uintptr_t>(address);
    e.size = size;
    e.requested = requested;
    e.detail = static_cast<std::uint8_t>(fn);
    detail::record_slow(e, 0);
  }
}
[[gnu::always_inline]] inline void record_reuse(std::uint32_t pool, const void* address,
                                                std::uint64_t size, std::uint64_t requested) {
  if (__builtin_expect(tracing(), 0)) {
    Event e;
    e.kind = EventKind::reuse;
    e.pool = pool;
    e.address = reinterpret_cast<std::uintptr_t>(address);
    e.size = size;
    e.requested = requested;
    e.detail = static_cast<std::uint8_t>(AllocFn::pool);
    detail::record_slow(e, 0);
  }
}
[[gnu::always_inline]] inline void record_free(std::uint32_t pool, const void* address,
                                               std::uint64_t size = 0, AllocFn fn = AllocFn::pool) {
  if (__builtin_expect(tracing(), 0)) {
    Event e;
    e.kind = EventKind::free;
    e.pool = pool;
    e.address = reinterpret_cast<std::uintptr_t>(address);
    e.size = size;
    e.detail = static_cast<std::uint8_t>(fn);
    detail::record_slow(e, 0);
  }
}
[[gnu::always_inline]] inline void record_segment(EventKind kind, std::uint32_t pool,
                                                  std::uint64_t address, std::uint64_t size,
                                                  SegmentDetail detail = SegmentDetail::whole) {
  if (__builtin_expect(tracing(), 0)) {
    Event e;
    e.kind = kind;  // segment_reserve or segment_release
    e.pool = pool;
    e.address = address;
    e.size = size;
    e.detail = static_cast<std::uint8_t>(detail);
    detail::record_slow(e, 0);
  }
}
[[gnu::always_inline]] inline void record_scope_begin(std::uint32_t scope, std::uint32_t pool = 0) {
  if (__builtin_expect(tracing(), 0)) {
    Event e;
    e.kind = EventKind::scope_begin;
    e.pool = pool;
    e.aux = scope;
    detail::record_slow(e, 0);
  }
}
[[gnu::always_inline]] inline void record_scope_end(std::uint32_t scope, std::uint32_t pool = 0) {
  if (__builtin_expect(tracing(), 0)) {
    Event e;
    e.kind = EventKind::scope_end;
    e.pool = pool;
    e.aux = scope;
    detail::record_slow(e, 0);
  }
}
// Records a `mark` event with the annotation text.
void record_mark(std::string_view text);
// The same, by its short name: `memtrail::mark("iter")` at the top of a loop
// makes its iterations analyzable (`memtrail report --iteration-mark iter`).
[[gnu::always_inline]] inline void mark(std::string_view text) {
  record_mark(text);
}

// Loop iterations, named scopes and the pause switch: the C API's functions
// (c_api.h), which Python and C programs call too, in RAII form.
//
//   for (auto& batch : loader) {
//     memtrail::Iteration step("step");   // memtrail check --iteration-mark step
//     train(batch);
//   }
class Iteration {
 public:
  explicit Iteration(const char* loop) : loop_(loop) { memtrail_iteration_begin(loop); }
  ~Iteration() { memtrail_iteration_end(loop_); }
  Iteration(const Iteration&) = delete;
  Iteration& operator=(const Iteration&) = delete;

 private:
  const char* loop_;
};
class Scope {
 public:
  explicit Scope(const char* name) : name_(name) { memtrail_scope_begin(name); }
  ~Scope() { memtrail_scope_end(name_); }
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

 private:
  const char* name_;
};
// No new blocks recorded, process-wide, while one is alive (frees still are).
class Paused {
 public:
  Paused() { memtrail_pause(); }
  ~Paused() { memtrail_resume(); }
  Paused(const Paused&) = delete;
  Paused& operator=(const Paused&) = delete;
};

}  // namespace memtrail
