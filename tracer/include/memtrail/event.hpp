// memtrail event model: the one vocabulary shared by the recorder, the trace
// format, the analyzer and the GUI. Every producer (preload tracer, allocator
// pools, CUPTI injection) emits these; every consumer reads only these.
//
// Side tables (strings, modules, threads, pools, stack nodes, scopes) are
// referenced by small integer ids; id 0 always means "none".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace memtrail {

enum class EventKind : std::uint8_t {
  alloc = 1,            // block handed to the program
  free = 2,             // block handed back by the program
  reuse = 3,            // an alloc served from memory the pool already held (cache hit)
  segment_reserve = 4,  // pool took memory from its upstream
  segment_release = 5,  // pool returned memory to its upstream
  scope_begin = 6,      // named tidy scope / workspace activation / loop iteration
  scope_end = 7,
  workspace_reset = 8,   // workspace cycle ended, memory recycled
  workspace_learn = 9,   // workspace learned its size
  spill = 10,            // allocation spilled outside its workspace
  donate = 11,           // an output took over an input buffer
  donate_rejected = 12,  // a donated buffer could not be used
  oom = 13,              // an allocation failed
  sample = 14,           // periodic process counters
  mark = 15,             // user annotation
  reachability = 16,     // exit-time classification of one block still live
};
inline constexpr int kEventKindCount = 17;  // valid kinds are 1..16

// What Event::aux names: a scope id (ScopeInfo), a string id (mark text,
// donation refusal reason, OOM pool state) or a plain value. The reader
// checks the ids and tools print them; this is the one list of which is which.
enum class AuxId : std::uint8_t { none, scope, string };
constexpr AuxId aux_id_of(EventKind kind) {
  switch (kind) {
    case EventKind::scope_begin:
    case EventKind::scope_end:
    case EventKind::workspace_reset:
    case EventKind::workspace_learn:
    case EventKind::spill:
    case EventKind::donate:
      return AuxId::scope;
    case EventKind::mark:
    case EventKind::donate_rejected:
    case EventKind::oom:
      return AuxId::string;
    default:
      return AuxId::none;
  }
}

// Which API produced an alloc/free (Event::detail for alloc, reuse, free).
enum class AllocFn : std::uint8_t {
  unknown = 0,
  malloc = 1,
  calloc = 2,
  realloc = 3,
  aligned = 4,  // posix_memalign, aligned_alloc, memalign, valloc, pvalloc
  op_new = 5,
  op_new_array = 6,
  op_delete = 7,
  op_delete_array = 8,
  free = 9,
  pool = 10,  // an allocator-stack pool (CachingPool, BfcPool, Workspace, ...)
  // A block the process already held when its trace began (a fork child's
  // parent's block, one kept over a failed exec), after an `inherited`
  // mark: live in this trace, but no allocation of it.
  inherited = 11,
};

// Event::detail for `reachability` events.
enum class LeakClass : std::uint8_t {
  unknown = 0,
  direct = 1,     // no pointer to it anywhere
  indirect = 2,   // pointed to only from leaked blocks
  reachable = 3,  // reachable from roots at exit: not a leak
  // The C/C++ runtime's own blocks (ld.so's DTVs, dynamic TLS and link
  // data; libstdc++'s start-up emergency pool): Valgrind frees them before
  // its check (--run-libc-freeres, --run-cxx-freeres) and LSan ignores them,
  // so they are neither leaks nor counted as the program's reachable blocks.
  runtime = 4,
  // Valgrind's "possibly lost": reached from the roots only through a chain
  // with at least one interior pointer (no pointer to its start from a root
  // or from a reachable block). Not a leak in `leaked`, as in LSan, which
  // calls such blocks reachable.
  possible = 5,
};

// Event::detail for `mark` events.
enum class MarkDetail : std::uint8_t {
  user = 0,    // an annotation: aux = its text
  signal = 1,  // the process was ended by a signal (the trace's last event):
               // size = signal number, aux = its name ("SIGTERM") or 0
  attach = 2,  // `memtrail attach` started tracing a running process here:
               // blocks allocated before are unknown; size = pid, aux = text
  lost = 3,    // the recorder could not record some of the program's events:
               // size = how many, requested = LostReason, aux = string id of
               // the reason in words ("before start-up: ...")
  // c_api.h: aux = the loop's name. A begin is an iteration mark as a user
  // mark of that text is; an end closes the iteration without opening one.
  iteration_begin = 4,
  iteration_end = 5,
  // memtrail_pause() / memtrail_resume(): allocations in between are not
  // in the trace (frees are); size = the pause depth after the call.
  pause = 6,
  resume = 7,
  // The image called exec here (issue 27): its trace ends, and the blocks
  // live now are not classified, as Valgrind classifies no image that
  // exec'd. aux = its text. A failed exec goes on in a new trace, which
  // carries those blocks (an `inherited` mark).
  exec = 8,
  // The blocks live in another trace of this process at its start were
  // carried into this one as allocations at time 0 (a fork child's
  // inheritance, the image that goes on after a failed exec): size = their
  // number, requested = the pid they came from, aux = text.
  inherited = 9,
};

// MarkDetail::lost's `requested`: why events are missing from the trace.
enum class LostReason : std::uint8_t {
  unknown = 0,
  before_startup = 1,  // made before the recorder started; the early buffer was full
  signal_handler = 2,  // made by a signal handler that interrupted the recorder
                       // while its queue was full
  disk_space = 3,      // recorded, but not written: the trace's file system fell
                       // below the free space the trace leaves to the program
  process_ended = 4,   // recorded, but not written: the process ended without
                       // finishing its trace (raw exit_group, SIGKILL, a failed
                       // write); counted by `memtrail run` from the event tally
};

// A frame of a recorded stack that is a Python function, not a code address
// (the recorder's CPython 3.11 frames, tracer/src/python_frames.cpp): the
// tag ORed with the string id of "function\x1ffile\x1fline". Above every
// user-space address, so no module ever holds it.
constexpr std::uint64_t kPythonFrameTag = 0xFFFFE00000000000ull;
constexpr bool is_python_frame(std::uint64_t ip) {
  return (ip & 0xFFFFF00000000000ull) == kPythonFrameTag;
}
constexpr std::uint32_t python_frame_string(std::uint64_t ip) {
  return static_cast<std::uint32_t>(ip);
}

// Event::detail for segment events.
enum class SegmentDetail : std::uint8_t {
  whole = 0,  // cudaMalloc/mmap style segment
  map = 1,    // expandable segment: pages mapped / unmapped inside a reservation
};

// One event. Field meanings per kind (anything not listed is 0):
//   alloc, reuse        address, size = granted bytes, requested = asked bytes,
//                       detail = AllocFn, aux = alignment (0 = default)
//   free                address, size = block size if the producer knows it
//                       (0 = unknown: the analyzer uses the live block's size),
//                       detail = AllocFn of the deallocation function
//   segment_reserve/_release  address, size, detail = SegmentDetail
//   scope_begin/_end    aux = scope id
//   workspace_reset     aux = scope id, size = bytes in use when reset
//   workspace_learn     aux = scope id, size = learned size
//   spill               aux = scope id, address, size = spilled bytes
//   donate              address = donated buffer, size, aux = scope id or 0
//   donate_rejected     address, size, aux = string id of the reason
//   oom                 size = requested bytes, requested = rounded bytes,
//                       aux = string id of a JSON object with the pool's state
//   sample              address = RSS bytes, size = heap used bytes,
//                       requested = heap reserved bytes, aux = device free bytes
//                       (use the sample_* accessors below)
//   mark                aux = string id of the annotation, detail = MarkDetail;
//                       MarkDetail::signal: size = signal number;
//                       MarkDetail::lost: size = events lost, requested = LostReason
//   reachability        address, size, detail = LeakClass
struct Event {
  std::uint64_t time_ns = 0;  // monotonic, since trace start
  std::uint32_t thread = 0;   // thread table id
  std::uint32_t pool = 0;     // pool table id
  std::uint32_t stack = 0;    // stack node id of the innermost frame, 0 = none
  EventKind kind = EventKind::mark;
  std::uint8_t detail = 0;
  std::uint64_t address = 0;
  std::uint64_t size = 0;
  std::uint64_t requested = 0;
  std::uint64_t aux = 0;

  bool operator==(const Event&) const = default;
};

inline std::uint64_t sample_rss(const Event& e) {
  return e.address;
}
inline std::uint64_t sample_heap_used(const Event& e) {
  return e.size;
}
inline std::uint64_t sample_heap_reserved(const Event& e) {
  return e.requested;
}
inline std::uint64_t sample_device_free(const Event& e) {
  return e.aux;
}

enum class MemorySpace : std::uint8_t { host = 0, pinned = 1, device = 2, managed = 3, mmap = 4 };

enum class PoolKind : std::uint8_t {
  heap = 0,       // the process heap seen by the preload tracer ("malloc")
  mmap = 1,       // mmap/munmap seen by the preload tracer
  system = 2,     // an allocator-stack upstream (system heap, mmap, CUDA)
  caching = 3,    // PyTorch-style caching pool
  bfc = 4,        // XLA-style BFC arena
  workspace = 5,  // ND4J-style workspace
  tidy = 6,       // TF.js-style tidy scope
  cuda = 7,       // CUDA device memory seen by CUPTI
  other = 8,
};

enum class ScopeKind : std::uint8_t { user = 0, tidy = 1, workspace = 2, iteration = 3 };

// Side-table records. A record may be emitted again with the same id to
// update it (a thread renamed); readers keep the latest.
struct ModuleInfo {
  std::uint32_t id = 0;
  std::string path;
  std::uint64_t load_address = 0;  // where offset 0 of the file is mapped (dlpi_addr)
  std::uint64_t start = 0;         // lowest mapped address of its PT_LOAD segments
  std::uint64_t end = 0;           // one past the highest
  std::string build_id;            // lowercase hex, empty if none
  bool operator==(const ModuleInfo&) const = default;
};

struct ThreadInfo {
  std::uint32_t id = 0;
  std::uint64_t tid = 0;  // OS thread id
  std::string name;
  bool operator==(const ThreadInfo&) const = default;
};

struct PoolInfo {
  std::uint32_t id = 0;
  std::uint32_t parent = 0;  // upstream pool id, 0 = none
  std::string name;
  PoolKind kind = PoolKind::other;
  MemorySpace space = MemorySpace::host;
  std::int32_t device = -1;  // device index, -1 = host
  bool operator==(const PoolInfo&) const = default;
};

// Stack trie node: `ip` is a return address (or the allocation site for the
// innermost frame); `parent` is the caller's node, 0 for the outermost frame.
struct StackNode {
  std::uint32_t id = 0;
  std::uint32_t parent = 0;
  std::uint64_t ip = 0;
  bool operator==(const StackNode&) const = default;
};

struct ScopeInfo {
  std::uint32_t id = 0;
  std::string name;
  ScopeKind kind = ScopeKind::user;
  std::uint32_t pool = 0;
  bool operator==(const ScopeInfo&) const = default;
};

// Stable lowercase names, as used in `report --json`, `dump` and docs.
std::string_view to_string(EventKind kind);
std::string_view to_string(AllocFn fn);
std::string_view to_string(LeakClass c);
std::string_view to_string(MemorySpace space);
std::string_view to_string(PoolKind kind);
std::string_view to_string(ScopeKind kind);

}  // namespace memtrail
