// memtrail recorder internals shared with the preload tracer and the CUPTI
// injection library. Not a user API: these hooks let a malloc interposer sit
// on top of the recorder without recursing into it, and let it run exit-time
// analyses (leak reachability) against the writer's view of the heap.
//
// Rules for code that runs inside malloc:
//   * record_slow() never calls malloc/new and takes no lock on its hot path;
//     the first event of a thread registers it (that may allocate, under the
//     thread's reentrancy guard, so nested mallocs are dropped, not traced).
//   * Anything the interposer does that may allocate must run inside a
//     ScopedInternal guard; events produced under it are dropped.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "memtrail/event.hpp"

struct sigaction;

namespace memtrail::detail {

// ---- reentrancy ---------------------------------------------------------

// While alive, events recorded by the current thread are dropped. Nests.
class ScopedInternal {
 public:
  ScopedInternal() noexcept;
  ~ScopedInternal();
  ScopedInternal(const ScopedInternal&) = delete;
  ScopedInternal& operator=(const ScopedInternal&) = delete;
};

// True inside a ScopedInternal guard, inside the recorder itself, and on the
// recorder's own threads (writer, sampler), which are never traced.
bool thread_is_internal() noexcept;

// ---- draining -------------------------------------------------------------

// Synchronously drains every thread's published events into the trace file
// and flushes it. Returns when the writer has written them (or after ~2 s if
// the writer is stuck). No-op when not tracing.
void flush_all_threads();

// Like record_slow() (dropped under the reentrancy guard), but never walks
// the stack: for frees, whose block is identified by its alloc's stack (as
// heaptrack does it), halving the unwinding a malloc/free pair costs.
// Returns false on a thread past its exit notice (the recorder's pthread key
// destructor), where nothing is recorded although glibc still frees there.
bool record_unwalked(const Event& event);

// Records `event` as given, even under the caller's reentrancy guard (lifted
// for this call): time and thread are filled in, the stack is NOT captured
// (event.stack is kept, 0 = none). For events the exit hook records, which
// runs under the guard: reachability (preload and CUPTI) and late frees.
void record_unwalked_past_guard(Event event);

// Records `event` with a stack taken earlier by backtrace_here() (time and
// thread are filled in now; frames in the recorder's own modules are
// skipped). For events the preload buffered before the session started.
void record_with_frames(const Event& event, const std::uint64_t* ips, int n);

// The return addresses of the calling thread's stack (unw_backtrace), errno
// kept; usable before any session exists. Returns how many were stored.
int backtrace_here(std::uint64_t* ips, int limit);

// ---- live heap blocks (track_live_heap) -----------------------------------

struct LiveBlock {
  std::uint64_t address = 0;
  std::uint64_t size = 0;
  std::uint32_t stack = 0;   // stack node id of the allocation
  std::uint32_t thread = 0;  // thread table id of the allocation
  std::uint64_t time_ns = 0;
};

// Turns live-block tracking of heap_pool() on or off (also set by
// RecorderOptions::track_live_heap and MEMTRAIL_TRACK_LIVE_HEAP=1). The
// writer, not the hot path, maintains the map from alloc/free events.
void set_track_live_heap(bool on);

// Whether malloc is glibc's (default) or another allocator's (jemalloc,
// tcmalloc, mimalloc: then samples carry no mallinfo2 heap figures, which
// would describe glibc's unused heap). Call before start().
void set_heap_is_glibc(bool glibc);

// The heap pool's live blocks as of the last drain (call flush_all_threads()
// first for an up-to-date answer). Empty when tracking is off.
std::vector<LiveBlock> live_blocks();

// ---- heap window (per-test limits: memtrail/gtest.hpp) ---------------------

// Heap blocks allocated at or after `since_ns` (trace time): the bytes of
// those still live and the most that were live at once. Maintained by the
// writer with the live-block map (needs track_live_heap), in event-time order
// within each drain, so a single-threaded window is exact.
struct HeapWindow {
  std::uint64_t since_ns = 0;
  std::uint64_t live_bytes = 0;
  std::uint64_t live_blocks = 0;
  std::uint64_t peak_bytes = 0;
};
// Now, in trace time (ns since the trace started); 0 when not tracing.
std::uint64_t trace_time_ns() noexcept;
// Restarts the window at `since_ns`: blocks already live and allocated at or
// after it are counted at once. Call flush_all_threads() first.
void reset_heap_window(std::uint64_t since_ns);
// The window as of the last drain (flush_all_threads() first).
HeapWindow heap_window();
// The file the active session writes ("%p" expanded); empty when not tracing.
std::string trace_path();

// ---- threads ----------------------------------------------------------------

struct ThreadRecord {
  std::uint32_t id = 0;          // thread table id
  std::uint64_t tid = 0;         // OS thread id
  std::uintptr_t stack_low = 0;  // [stack_low, stack_high) from pthread_getattr_np
  std::uintptr_t stack_high = 0;
  std::uintptr_t thread_pointer = 0;  // __builtin_thread_pointer() of that thread (its TCB/TLS)
  bool exited = false;
};

// Every thread that recorded at least one event since start (or since the
// fork that created this process), with exited ones marked.
std::vector<ThreadRecord> thread_registry();

// The calling thread's stack cache counters in the current session
// (tracer/src/stack_cache.hpp): events served from the cache, events that
// unwound, and walks that could not vouch for their chain (a signal frame,
// a slot that did not hold its ip): those chains are not cached. All 0 when
// not tracing or when the cache is off.
struct StackCacheCounts {
  std::uint64_t hits = 0, misses = 0, unwalkable = 0;
  std::uint64_t walks = 0;  // learning walks (unw_step), cached or not
};
StackCacheCounts stack_cache_counts();

// Drain passes program threads made themselves in this session (they do
// when their busy threads fill the cores: drain_sharing.cpp).
std::uint64_t program_thread_drains();

// ---- process exit -----------------------------------------------------------

// `fn` runs once at process exit (or stop()), after the final drain of the
// program's threads and before the trace is finished; events it records
// (e.g. with record_unwalked_past_guard) still reach the file. nullptr clears it.
void set_exit_hook(void (*fn)());

// `fn` answers the device free bytes each `sample` event carries (aux); the
// CUDA injection sets it. nullptr: samples carry 0.
void set_device_free_probe(std::uint64_t (*fn)());

// Re-reads the module map (dl_iterate_phdr) before the next drain. Call after
// dlopen/dlclose.
void notify_modules_changed();

// ---- configuration ------------------------------------------------------------

// The MEMTRAIL_* environment variables someone in this process understands;
// RecorderOptions::from_environment() warns about any other MEMTRAIL_* name.
// The recorder's own names come first; other libraries in the process (the
// preload tracer, CUPTI injection) add theirs with add_known_environment_variable
// BEFORE calling from_environment().
inline constexpr std::string_view kRecorderEnvironment[] = {
    "MEMTRAIL_OUTPUT",      "MEMTRAIL_STACKS",        "MEMTRAIL_STACK_DEPTH",
    "MEMTRAIL_SAMPLE_MS",   "MEMTRAIL_FLUSH_MS",      "MEMTRAIL_TRACK_LIVE_HEAP",
    "MEMTRAIL_AUTOSTART",   "MEMTRAIL_EXEC_PID",      "MEMTRAIL_TIME_RESOLUTION_NS",
    "MEMTRAIL_STACK_CACHE", "MEMTRAIL_ADDRESS_MODEL",
};
// Event time resolution of the recorder's traces, in ns: 1000 unless
// MEMTRAIL_TIME_RESOLUTION_NS (1..1000000000, 1 = exact) says otherwise.
// Coarser times make the trace ~30% smaller (docs/trace-format.md).
inline constexpr std::uint32_t kDefaultTimeResolutionNs = 1000;
std::uint32_t time_resolution_from_environment();
// MEMTRAIL_ADDRESS_MODEL: 1 = the writer always codes alloc addresses with
// the glibc model (smallest traces), 0 = never (cheapest writer), unset or
// `auto` = only while the writer keeps up (TraceWriter::set_address_model).
enum class AddressModel { automatic, always, never };
AddressModel address_model_from_environment();
// `name` must outlive the process (a string literal). Thread-safe.
void add_known_environment_variable(std::string_view name);
bool is_known_environment_variable(std::string_view name);

// True once start() succeeded and until stop().
bool recorder_started() noexcept;

// ---- signals ----------------------------------------------------------------

// sigaction() as the program sees it (the preload's sigaction and signal
// interposers call this). For the signals whose default action ends the
// process, the recorder keeps its own handler in place of SIG_DFL, to finish
// the trace and then die of the same signal; the program still reads back
// SIG_DFL, and any handler or SIG_IGN it sets replaces ours as usual.
int program_sigaction(int sig, const struct ::sigaction* act, struct ::sigaction* old) noexcept;

// Set by the preload's interposers while the thread is inside the real
// allocator, which may hold one of its locks. The trace's end is written by
// the writer thread, which takes malloc's locks too (a free, mallinfo2): a
// fatal signal from outside (SIGTERM, SIGINT, ...) landing there is
// therefore kept in t_deferred_signal and raised again when the allocator
// returns (RealAllocatorCall in next_allocator.hpp), where the recorder's
// handler can finish the trace. Faults are never deferred.
extern __thread bool t_in_real_allocator __attribute__((tls_model("initial-exec")));
extern __thread int t_deferred_signal __attribute__((tls_model("initial-exec")));
// Raises the deferred signal (and clears it).
void raise_deferred_signal() noexcept;

// ---- exec -------------------------------------------------------------------

// An exec keeps the pid, so the next image's "%p" names the same file. The
// exec interposers call stop_for_exec() first: it finishes the trace (no exit
// hook: exec is not an exit) and returns true if there was one; the new image
// then finds MEMTRAIL_EXEC_PID=<its pid> in its environment and takes a fresh
// name (<name>.1.mtr, ...) instead of replacing this one. If the exec fails,
// resume_after_failed_exec() starts a new trace the same way.
bool stop_for_exec();
void resume_after_failed_exec();
// The exec marker is MEMTRAIL_EXEC_PID=<pid>.<seq>: in a run directory the
// next image names its file <pid>.<seq>.<program>.mtr with this <seq>.
int next_image_sequence();

// Frames whose return address lies in the module containing `address_in_module`
// are recorder machinery: they are skipped at the top of every stack.
void add_internal_code(const void* address_in_module);

}  // namespace memtrail::detail
