// Recorder runtime internals shared by recorder.cpp (hot path and API),
// writer_thread.cpp (draining and encoding) and process_hooks.cpp (exit,
// signals, fork). One Session is one trace file; a fork child abandons its
// parent's Session (its writer thread did not survive the fork) and builds
// its own, so nothing the parent's writer held is ever touched again.
#pragma once

#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <bit>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "block_pool.hpp"
#include "event_tally.hpp"
#include "heap_probe.hpp"
#include "live_heap.hpp"
#include "memtrail/detail/environment.hpp"
#include "memtrail/detail/heap_window.hpp"
#include "memtrail/recorder.hpp"
#include "memtrail/trace_file.hpp"
#include "module_map.hpp"
#include "private_fd.hpp"
#include "stack_cache.hpp"
#include "stack_trie.hpp"

namespace memtrail::runtime {

// Samples read mallinfo2 only while malloc is glibc's (set_heap_is_glibc).
inline std::atomic<bool> g_glibc_heap{true};
// set_device_free_probe(): the device free bytes for `sample` events.
inline std::atomic<std::uint64_t (*)()> g_device_free_probe{nullptr};

inline constexpr int kMaxStackDepth = 256;
inline constexpr int kMaxNameBytes = 64;

// What a program thread appends to its block for one event: a 32-byte
// head, which for nearly every heap event is the whole record; a 24-byte
// RawTail only when the event has a field the head cannot hold (aux, an
// explicit stack id, a pool id above 255, a requested size that is neither
// the size nor 0); then `frames` return addresses (innermost first). The
// writer first touches this memory on another core, so every byte saved
// here is a byte less to pull across (56 bytes per event before).
//
// time: the session clock's raw reading (TSC ticks or ns, see SessionClock).
// stack_slot: 0, or 1 + a slot of the thread's sent-stack cache: with
// frames > 0 the event defines the slot, with frames == 0 it reuses the
// stack the slot was last defined with.
struct RawHead {
  std::uint64_t time;
  std::uint64_t address, size;
  std::uint8_t kind, detail;
  std::uint16_t frames;
  std::uint16_t stack_slot;
  std::uint8_t pool;   // without a tail: the pool id
  std::uint8_t flags;  // kRawHasTail, kRawRequestedIsSize
};
static_assert(sizeof(RawHead) == 32);
struct RawTail {
  std::uint64_t requested, aux;
  std::uint32_t pool, stack;
};
static_assert(sizeof(RawTail) == 24);
// RawHead's fourth word (kind .. flags), composed from its fields.
inline std::uint64_t raw_meta_word(const RawHead& h) {
  static_assert(offsetof(RawHead, kind) == 24 && offsetof(RawHead, detail) == 25 &&
                offsetof(RawHead, frames) == 26 && offsetof(RawHead, stack_slot) == 28 &&
                offsetof(RawHead, pool) == 30 && offsetof(RawHead, flags) == 31);
  static_assert(std::endian::native == std::endian::little);
  return std::uint64_t{h.kind} | std::uint64_t{h.detail} << 8 | std::uint64_t{h.frames} << 16 |
         std::uint64_t{h.stack_slot} << 32 | std::uint64_t{h.pool} << 48 |
         std::uint64_t{h.flags} << 56;
}
// The head at `words` (8-byte aligned, as every record is), read as four
// words and split in registers: the inverse of raw_meta_word().
inline RawHead read_raw_head(const std::uint64_t* words) {
  RawHead h;
  h.time = words[0];
  h.address = words[1];
  h.size = words[2];
  std::uint64_t meta = words[3];
  h.kind = static_cast<std::uint8_t>(meta);
  h.detail = static_cast<std::uint8_t>(meta >> 8);
  h.frames = static_cast<std::uint16_t>(meta >> 16);
  h.stack_slot = static_cast<std::uint16_t>(meta >> 32);
  h.pool = static_cast<std::uint8_t>(meta >> 48);
  h.flags = static_cast<std::uint8_t>(meta >> 56);
  return h;
}
inline constexpr std::uint8_t kRawHasTail = 1;
inline constexpr std::uint8_t kRawRequestedIsSize = 2;  // without a tail; else requested is 0
inline constexpr std::size_t kHeadWords = sizeof(RawHead) / 8;
inline constexpr std::size_t kTailWords = sizeof(RawTail) / 8;
// Words before the frames (the record is these and `frames` words more).
inline std::size_t raw_fixed_words(const RawHead& h) {
  return kHeadWords + ((h.flags & kRawHasTail) ? kTailWords : 0);
}
inline constexpr std::uint8_t kRawRename = 0xff;

struct Session;

// Event time stamps. With an invariant TSC (constant_tsc, nonstop_tsc and
// rdtscp in /proc/cpuinfo) program threads read rdtscp (a few ns, no vDSO
// call) and the writer converts ticks to ns since the trace started, with a
// ratio measured against CLOCK_MONOTONIC (re-measured while the run is
// young, then fixed).
// Otherwise the raw reading is clock_gettime's ns.
//
// Program threads read the first three fields on every event; the writer's
// fields sit on their own cache line. (When the writer stored last_ns next
// to `tsc` on every event, each of those stores pulled the line away from
// the program threads: on two vCPUs of different dies the writer then took
// 1.7x its cpu time and the program threads 1.4x.)
struct SessionClock {
  bool tsc = false;
  std::uint64_t start_ns = 0;          // CLOCK_MONOTONIC at start
  std::uint64_t start_ticks = 0;       // rdtsc at start
  alignas(64) double ns_per_tick = 0;  // the drain's (work_mutex), as below
  std::uint64_t ns_per_tick_q32 = 0;   // the same in 32.32 fixed point
  std::uint64_t last_ns = 0;           // conversions never go back

  static std::uint64_t monotonic_ns();
  static bool invariant_tsc();
  void begin();
  // Program threads: a raw reading, taken after every earlier load has its
  // value. A plain rdtsc may run ahead of the load that saw another thread's
  // event (it is not ordered with loads): a free of a block handed over by
  // an allocating thread was stamped up to ~600 ticks before the alloc
  // (AMD EPYC), and the drain's merge by time wrote it first. rdtscp waits
  // for the earlier instructions, as clock_gettime's ordered read does.
  std::uint64_t raw_now() const {
    unsigned aux;
    if (tsc) return __builtin_ia32_rdtscp(&aux);
    return monotonic_ns() - start_ns;
  }
  // Drain: re-measures the tick rate (cheap; call once per drain).
  void calibrate();
  // Drain: a span of raw readings about `ns` long (before the first
  // calibration, with TSC, it takes one tick per ns: ~3x too short).
  std::uint64_t raw_span(std::uint64_t ns) const {
    return tsc && ns_per_tick > 0 ? static_cast<std::uint64_t>(ns / ns_per_tick) : ns;
  }
  // Drain: a raw reading as ns since start, never below the previous result.
  std::uint64_t to_ns(std::uint64_t raw) {
    std::uint64_t ns = raw;
    if (tsc)
      ns = raw > start_ticks
               ? static_cast<std::uint64_t>(
                     (static_cast<unsigned __int128>(raw - start_ticks) * ns_per_tick_q32) >> 32)
               : 0;
    if (ns < last_ns) ns = last_ns;
    last_ns = ns;
    return ns;
  }
};

// A thread's tables, in a mapping of their own (map_thread_tables): taken at
// the thread's first event, given back when the writer retires the thread
// (its last event drained), so a program that starts and ends threads by
// the thousand keeps none of them. Plain data, never constructed: fresh
// mmap memory is all zeros, the tables' empty state, and a page costs
// memory only once written (an idle thread touches a page or two of its
// ~500 KiB, most of it the stack cache).
struct ThreadTables {
  // Stacks this thread already sent, by a 64-bit hash of the ip array,
  // direct-mapped: a repeated stack travels as its slot number only, so it
  // costs the writer no copy and no trie walk. 0 = empty.
  static constexpr std::uint32_t kStackSlots = 1024;  // slot + 1 fits RawHead::stack_slot
  std::uint64_t sent_stack_hash[kStackSlots];
  // Chains a walk could not make cacheable (too deep, a signal frame, ...),
  // by hash, direct-mapped: not walked again while they stay here (a failed
  // walk costs as much as a hundred hits save).
  static constexpr std::uint32_t kUnlearnableSlots = 64;
  std::uint64_t unlearnable[kUnlearnableSlots];
  // Native chains this thread sent with Python frames spliced in
  // (python_frames.hpp), by the native chain's hash, direct-mapped: the
  // sent-stack table holds the spliced stack's hash, so without this a
  // Python event's native chain would never count as seen before and never
  // be learnt. 0 = empty.
  static constexpr std::uint32_t kSplicedSlots = 256;
  std::uint64_t spliced_native_hash[kSplicedSlots];
  // Writer side: the stack id of each sent slot.
  std::uint32_t slot_stack[kStackSlots];
  // Unwound chains by record_impl's frame address (stack_cache.hpp); used
  // only when the stack cache is on.
  StackCache stack_cache;
};

// Maps a zeroed ThreadTables (nullptr when out of address space), and
// gives one back.
ThreadTables* map_thread_tables();
void unmap_thread_tables(ThreadTables* tables);

// Per-thread state, in the Session's mmap arena; lives until the process
// ends (a retired thread leaves the registry's list, its memory stays), so
// it is kept small: its tables live apart (ThreadTables) and go back when
// the thread is retired.
struct ThreadBuffer {
  Session* session = nullptr;
  std::uint32_t id = 0;
  std::uint64_t tid = 0;
  std::uintptr_t stack_low = 0, stack_high = 0, thread_pointer = 0;
  // Registry list: pushed at its head; the drain unlinks retired threads
  // (Session::unlink_retired), an unlinked one keeping its `next`.
  std::atomic<ThreadBuffer*> next{nullptr};

  // Owner side.
  Block* write_block = nullptr;
  std::uint32_t write_pos = 0;
  // Events this thread made: its slot of the session's tally (a file that
  // outlives the process: event_tally.hpp), else `made_here`.
  std::uint64_t* made = &made_here;
  std::uint64_t made_here = 0;
  std::uint64_t* tally_slot = nullptr;  // `made` when it is a slot
  static constexpr std::uint32_t kStackSlots = ThreadTables::kStackSlots;
  static constexpr std::uint32_t kUnlearnableSlots = ThreadTables::kUnlearnableSlots;
  static constexpr std::uint32_t kSplicedSlots = ThreadTables::kSplicedSlots;
  // Sent stacks, unlearnable chains, the stack cache, the writer's slot
  // map: never nullptr in a registered thread; unmapped once retired.
  ThreadTables* tables = nullptr;
  // &tables->stack_cache; nullptr when stacks or the cache are off.
  StackCache* stack_cache = nullptr;
  std::uint64_t stack_cache_hits = 0, stack_cache_misses = 0, stack_cache_unwalkable = 0,
                stack_cache_walks = 0;
  std::int32_t walk_credit = 0;           // see kWalkCost in recorder.cpp
  std::int32_t stepped_unwinds_left = 0;  // see kSteppedUnwinds (stack_cache.hpp)

  // Set by the thread-exit notice after the thread's last event.
  std::atomic<bool> exited{false};
  // Raw clock when the thread last took a block or drained: recent means
  // it is busy producing (Session::count_busy_producers).
  std::atomic<std::uint64_t> active_tick{0};

  // Name at registration; later renames are kRawRename events.
  char name[kMaxNameBytes] = {};

  // Writer side.
  Block* read_block = nullptr;
  std::uint32_t read_pos = 0;
  // read_block's data up to here went back to the system (BlockPool::
  // release_read, many live threads only); 0 after a block change.
  std::uint32_t released_pos = 0;
  bool announced = false;
  bool retired = false;  // exited and fully drained: blocks recycled, tables unmapped
};

static_assert(ThreadBuffer::kStackSlots < 65536, "slot + 1 must fit RawHead::stack_slot");

// Side tables with process-lifetime ids (pools, scopes, strings). A fork
// child keeps them; each Session emits the entries it has not emitted yet.
struct Tables {
  std::mutex mutex;
  std::vector<PoolInfo> pools;       // id = index + 1
  std::vector<ScopeInfo> scopes;     // id = index + 1
  std::vector<std::string> strings;  // id = index + 1
  std::unordered_map<std::string, std::uint32_t> string_ids;
};
Tables& tables();

struct Session {
  RecorderOptions options;
  std::string path;
  // The process this session traces. A child made by a fork that ran no
  // fork handlers (the fork system call, clone without CLONE_VM) still sees
  // the session, whose writer thread does not exist in it: the slow paths
  // compare getpid() with this before they wait for the writer or drain
  // into its file (abandon_if_foreign).
  int pid = 0;
  // A word in a page the kernel zeroes in the child of any fork
  // (MADV_WIPEONFORK), set to 1: still 1 under another pid means a vfork
  // child, whose memory is the parent's and must not be touched. nullptr
  // where the kernel lacks it (a pid mismatch then means a fork).
  volatile std::uint32_t* fork_probe = nullptr;
  std::uint64_t start_monotonic_ns = 0;
  SessionClock clock;
  // Read by program threads on every event: off the clock's writer line.
  alignas(64) int stack_frames = 0;  // 0 = stacks off
  bool stack_cache = true;           // RecorderOptions::stack_cache

  BlockPool blocks;
  Arena arena;
  std::atomic<ThreadBuffer*> registry{nullptr};
  std::atomic<std::uint32_t> next_thread_id{1};
  std::atomic<std::uint64_t> live_threads{0};  // registered and not exited (backpressure)

  // Program threads short of blocks (next_block) sleep on this futex word,
  // which the writer bumps after a pass that gave blocks back, waking them
  // only when someone waits.
  alignas(64) std::atomic<std::uint32_t> blocks_given_back{0};
  std::atomic<std::uint32_t> block_waiters{0};

  // Who drains (drain_sharing.cpp). With at least as many busy program
  // threads as cores, the writer stands aside and the program threads drain
  // their backlog themselves: a writer thread would be a third thread
  // fighting two for two cores.
  int cores = 1;                                        // the process's CPU affinity at start
  std::atomic<int> busy_producers{0};                   // count_busy_producers() at the last look
  std::atomic<std::uint64_t> program_thread_drains{0};  // passes drained by them
  // Events of signal handlers that interrupted the recorder and found their
  // thread's queue full (handler_queue.hpp): said in the trace at the end.
  std::atomic<std::uint64_t> lost_in_handlers{0};

  // Events made and written, in a file that survives an abrupt end of the
  // process (event_tally.hpp); inactive outside a run directory.
  EventTally tally;
  // Writer thread and the requests it serves.
  std::unique_ptr<TraceWriter> writer;
  std::thread writer_thread;
  HeapProbe heap_probe;  // glibc's figures for the samples
  // Futex word the writer sleeps on between passes; wake() bumps it (an
  // async-signal-safe wake-up that needs no descriptor: private_fd.hpp).
  alignas(64) std::atomic<std::uint32_t> wake_word{0};
  detail::OwnFd statm;     // /proc/self/statm, read at each sample
  bool sample_rss = true;  // false under a tiny descriptor limit, shared table
  // The writer thread's descriptor table is its own (private_fd.hpp): the
  // trace file and statm are in no table of the program's. At start the
  // file, opened by start_session, is handed over (table_step, a futex
  // word: kTable* in writer_thread.cpp).
  bool own_table = false;
  std::atomic<std::uint32_t> table_step{0};
  int private_trace_fd = -1;  // the file's number in the writer's table
  std::atomic<std::uint64_t> flush_requested{0};
  std::atomic<std::uint64_t> flush_done{0};
  std::atomic<bool> exit_requested{false};
  // flush_all_threads_lean(): the flush that serves it also releases.
  std::atomic<bool> release_scratch_asked{false};
  // pause_threads(): once flush ticket `pause_ticket` is served the writer
  // thread leaves without finishing the file; resume_threads() starts it again.
  std::atomic<bool> pause_requested{false};
  std::uint64_t pause_ticket = 0;
  std::atomic<bool> modules_dirty{false};
  std::atomic<bool> failed{false};
  // A fatal signal ends the process: the writer's last pass records it
  // (a MarkDetail::signal mark) before the end marker.
  std::atomic<int> ended_by_signal{0};
  // Set by the writer thread as it leaves (file closed): a signal handler
  // cannot join it, so it polls this.
  std::atomic<bool> writer_done{false};
  // The end of the trace is written. A fatal signal's handler waits for this,
  // not writer_done: closing the writer frees memory the stopped thread's
  // malloc arena holds, and that free may never return.
  std::atomic<bool> trace_finished{false};
  // Held by whoever drains (the writer, or a program thread in
  // drain_here) and by fork's prepare handler, so a fork never snapshots a
  // drain holding a libc lock (the loader lock of dl_iterate_phdr, stdio)
  // that the child would need.
  std::mutex work_mutex;
  detail::AddressModel address_model = detail::AddressModel::automatic;

  // The drain's state (under work_mutex).
  StackTrie trie;
  ModuleMap modules;
  std::size_t emitted_pools = 0, emitted_scopes = 0, emitted_strings = 0;
  // One thread's place in a drain pass: what the pass may read of its block
  // chain (fixed at the start of the pass) and its next event.
  struct DrainCursor {
    ThreadBuffer* tb = nullptr;
    std::uint32_t thread = 0;              // tb->id
    Block* block = nullptr;                // being read
    std::uint32_t pos = 0;                 // read position in `block`
    std::uint32_t limit = 0;               // readable bytes of `block` (0: not yet known)
    Block* last = nullptr;                 // the last block this pass reads ...
    std::uint32_t last_used = 0;           // ... up to here
    bool chain_end = false;                // `last` had no successor
    bool exited = false;                   // the thread had exited before the pass
    bool stopped = false;                  // at an event stamped at or after the cut
    std::uint32_t order = 0;               // position in the registry: ties go first
    std::uint64_t time = 0;                // the next event's time stamp
    const std::uint64_t* event = nullptr;  // the next event
  };
  std::vector<DrainCursor> cursors;
  std::vector<std::uint32_t> heap;  // cursors with an event left, min-heap by (time, order)
  std::vector<Block*> consumed;     // read by this drain, given back at its end
  std::uint64_t last_cut = 0;       // raw: events stamped before it are drained
  // Program events handed to the writer (every record but a rename); as
  // each chunk closes, it is the count the tally gets once that chunk is
  // written.
  std::uint64_t events_drained = 0;
  std::unordered_map<std::uint32_t, std::uint64_t> thread_tids;  // thread id -> OS tid
  std::vector<ThreadBuffer*> threads_by_id;                      // index = thread id
  std::uint64_t next_sample_ns = 0, next_flush_ns = 0;

  // Live heap blocks (track_live_heap), maintained by the drain.
  std::atomic<bool> track_live{false};
  std::mutex live_mutex;
  LiveHeap live;
  detail::HeapWindow window;  // under live_mutex; see reset_heap_window()

  // Set before the session is published (start_session): the session
  // whose live blocks this process already holds; the first drain (under
  // work_mutex, before any event) writes them (inherited_blocks.cpp), so
  // the program does not wait for it at the fork.
  const Session* inherit_from = nullptr;
  const char* inherit_why = nullptr;
  void take_inherited_blocks();

  std::uint64_t now_ns() const;
  void wake();
  // Asks the writer to drain and flush; waits up to `timeout_ms` for it.
  void request_flush(int timeout_ms);
  void writer_main();
  void enter_own_table();                           // the writer's first step
  void open_statm();                                // its second
  void hand_over_trace_file();                      // start_session's side of enter_own_table
  void wait_for_work(bool more, bool stood_aside);  // writer_main's stages
  bool writer_round(bool stood_aside, bool exiting, std::uint64_t ticket, std::uint64_t asked_at,
                    const std::optional<HeapProbe::Figures>& heap);
  // One pass; true when a thread had more than one pass takes (drain again).
  // Its stages (drain_pass.cpp):
  bool drain();
  std::uint64_t pass_cut(ThreadBuffer* threads, bool exiting, bool& more);
  void open_cursors(ThreadBuffer* threads, bool exiting, std::uint64_t cut);
  void merge_events(std::uint64_t cut);
  void give_back_blocks();
  void release_scratch_if_asked();  // writer_main, everything drained
  // From a fatal-signal handler: stops recording, lets the writer drain
  // everything, record `sig` and finish the file; waits up to `timeout_ms`.
  // Async-signal-safe on the calling thread (atomics, write, nanosleep).
  void finish_on_signal(int sig, int timeout_ms);
  void emit_signal_mark(int sig);
  // A drain failed (disk full, ...): says so in one line and stops tracing.
  void stop_tracing(const std::exception& e);
  void say_space_loss();
  // A program thread short of blocks drains one pass itself, unless someone
  // else is draining (then false at once: it never waits for the lock).
  // Asynchronous fatal signals wait until the pass is over (drain_sharing.cpp).
  bool drain_here();
  bool drain_pass_here();  // the pass itself, under work_mutex if free
  // Threads that took a block or drained within the last few ms. Under
  // work_mutex; stores the result in busy_producers.
  int count_busy_producers();
  bool program_threads_drain() const {
    return busy_producers.load(std::memory_order_relaxed) >= cores;
  }
  // Reads the next event of `c` within this pass (sets c.event and c.time);
  // false when the cursor is done: at the end of what the pass may read, or
  // at an event stamped at or after `cut` (c.stopped).
  bool cursor_next(DrainCursor& c, std::uint64_t cut) {
    if (c.pos >= c.limit && !cursor_next_block(c)) return false;
    // Events are whole 8-byte words at 8-byte-aligned offsets.
    c.event = reinterpret_cast<const std::uint64_t*>(c.block->data() + c.pos);
    c.time = c.event[0];
    if (c.time >= cut) {
      c.stopped = true;
      return false;
    }
    return true;
  }
  // Moves `c` to where its next event is; false at the end of the pass's share.
  bool cursor_next_block(DrainCursor& c);
  static bool thread_drained(const DrainCursor& c);
  void unlink_retired();
  void emit_tables();
  // The glibc figures for a sample now due (read outside work_mutex).
  std::optional<HeapProbe::Figures> heap_figures_if_sample_due();
  void emit_sample(const HeapProbe::Figures& heap);
};

// The active session (nullptr when not tracing).
extern std::atomic<Session*> g_session;
// The session stop_session() is finishing (g_session is already nullptr):
// a fatal signal meanwhile waits for its writer instead of cutting the file.
extern std::atomic<Session*> g_stopping_session;

// Per-thread: reentrancy depth (>0 drops events), and the thread's buffer.
// __thread + initial-exec: no TLS wrapper calls and no __tls_get_addr (which
// may malloc) inside a malloc interposer.
extern __thread int t_internal __attribute__((tls_model("initial-exec")));
extern __thread ThreadBuffer* t_buffer __attribute__((tls_model("initial-exec")));
// Set by the thread-exit notice: nothing this thread does is recorded since.
extern __thread bool t_exited __attribute__((tls_model("initial-exec")));
// Set while this program thread drains (it holds work_mutex).
extern __thread bool t_draining __attribute__((tls_model("initial-exec")));

std::string expand_output_path(const std::string& pattern, bool is_fork_child);
// run_naming.cpp: an output ending in '/' is a run directory; each image
// claims <dir><pid>.<seq>.<program>.mtr there (O_EXCL).
bool is_run_directory_output(const std::string& output);
// `*opened` (when not null) gets the claimed file open for writing, or -1:
// a fork child creates it through the run directory's descriptor, opened
// by the first image of the run, so a worker forked after chroot() (the
// directory's path gone from its view) still writes its trace.
std::string claim_run_file(const std::string& directory, bool fork_child, bool exclusive,
                           int* opened = nullptr);
// This image's trace could not be created (`why`): one line in the run's
// list of problems (kRunMissingFile in analyzer/.../run_index.hpp), through
// a descriptor the run's first image opened, so a worker forked after
// setuid() or chroot() can still say it. memtrail run names them.
void note_missing_trace(const std::string& why);
// Events of this image that are not in its trace ("N events ...: why"),
// in the same list: memtrail run says them in its last line.
void note_lost_events(const std::string& what);
// A file of the run directory `directory` (a trace's tally), opened or
// removed through the directory's descriptor while this image holds it (a
// fork child after chroot), else by its path.
int open_in_run_directory(const std::string& directory, const std::string& path, int flags);
void unlink_in_run_directory(const std::string& directory, const std::string& path);
// The run directory and its list leave the program's table once the
// session's writer holds them in its own (start_session's side of the
// hand-over, under private_fd_lock()); kept there where the kernel cannot
// copy them back out for a fork child. The fork's prepare handler lends
// copies to the program's table for the child; after the fork the parent
// closes its copies, the child's writer takes them (`child_traced`) or the
// child closes them. A writer started again after a pause reopens them.
void hand_over_run_directory_locked();
void lend_run_directory_for_fork();
void run_directory_after_fork(bool child, bool child_traced);
void reopen_run_directory_in_writer();
TraceHeader make_header(std::uint64_t start_monotonic_ns);

// The writer thread starts with these blocked. A signal sent to the process
// (kill, Ctrl-C) must reach a program thread: its handler waits for the
// writer to finish the trace, which the writer could not do from inside the
// handler; and a program that blocks SIGTERM everywhere to read it from a
// signalfd must not have it taken by the writer. SIGPIPE: a write to a pipe
// fails with EPIPE instead.
sigset_t writer_blocked_signals();

// process_hooks.cpp
void install_process_hooks();
// True (and tracing stopped in this process, with one line on stderr) when
// `s` belongs to the parent of a child forked without fork handlers. Its
// writer thread and file are the parent's: the child must neither wait for
// the one nor write to the other. A system call: slow paths only.
bool abandon_if_foreign(Session* s);
// Marks `tb` exited when its thread ends (a thread_local destructor).
void watch_thread_exit(ThreadBuffer* tb);
void run_exit_hook();

// thread_stack.cpp: the calling thread's stack extent into `tb` (left 0
// when unknown, or until the pthread_getattr_np the thread is inside returns).
void learn_thread_stack(ThreadBuffer* tb);
void set_stack_extent(ThreadBuffer* tb, const pthread_attr_t& attr);

// recorder.cpp
void append_rename(Session* s, ThreadBuffer* tb, const char (&name)[kMaxNameBytes]);
// exclusive: never replace an existing file (a trace of an earlier image of
// this pid); take <name>.N.mtr instead.
// `inherit` (when not null): the session whose live blocks this process
// holds (its fork parent's, or the image's own before a failed exec); the
// new trace begins with them (inherited_blocks.cpp). `why` says which.
bool start_session(const RecorderOptions& options, bool fork_child, bool exclusive,
                   const Session* inherit = nullptr, const char* why = nullptr);
// Under s.work_mutex.
void inherit_live_blocks(Session& s, const Session& from, const char* why);
// fork()'s prepare handler, under work_mutex: drains every event recorded
// so far, so the live map the child inherits holds the blocks allocated
// just before the fork (drain_sharing.cpp).
void drain_before_fork(Session& s);
// exit_hook: run the exit hook (leak scan) first; not at exec.
void stop_session(bool exit_hook);

}  // namespace memtrail::runtime
