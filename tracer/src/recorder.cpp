// The recorder's public API and hot path. record_slow() runs inside malloc
// when the preload tracer is active, so it takes no lock and never allocates:
// it stamps the time, takes the call chain from the thread's validated stack
// cache (stack_cache.hpp) or else walks the stack with libunwind, and
// appends one RawHead (and, rarely, a RawTail) to the thread's mmap'ed block.
#define UNW_LOCAL_ONLY  // _UL* local-unwinding entry points of libunwind.so
#include <dlfcn.h>
#include <fcntl.h>
#include <libunwind.h>
#include <link.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <system_error>

#include "handler_queue.hpp"
#include "memtrail/detail/diagnostics.hpp"
#include "memtrail/detail/environment.hpp"
#include "memtrail/detail/exec.hpp"
#include "memtrail/detail/heap_window.hpp"
#include "memtrail/detail/live_blocks.hpp"
#include "memtrail/detail/own_mappings.hpp"
#include "memtrail/detail/pause.hpp"
#include "memtrail/detail/recording.hpp"
#include "memtrail/detail/reentrancy.hpp"
#include "memtrail/detail/runtime_hooks.hpp"
#include "memtrail/detail/session_state.hpp"
#include "memtrail/detail/test_counters.hpp"
#include "memtrail/detail/thread_registry.hpp"
#include "memtrail/event_tally.hpp"
#include "python_frames.hpp"
#include "runtime.hpp"
#include "signal_stack.hpp"
#include "stack_capture.hpp"

namespace memtrail {

namespace detail {
std::atomic<bool> g_tracing{false};
__thread const void* t_allocator_entry __attribute__((tls_model("initial-exec"))) = nullptr;
}  // namespace detail

namespace runtime {

std::atomic<Session*> g_session{nullptr};
std::atomic<Session*> g_stopping_session{nullptr};
__thread int t_internal __attribute__((tls_model("initial-exec"))) = 0;
__thread bool t_exited __attribute__((tls_model("initial-exec"))) = false;
__thread ThreadBuffer* t_buffer __attribute__((tls_model("initial-exec"))) = nullptr;
// Set while record_impl appends to the thread's buffer: an event arriving
// then (t_internal is 1, the recorder's own guard) comes from a signal
// handler that interrupted it, and waits in t_handler_queue.
__thread bool t_appending __attribute__((tls_model("initial-exec"))) = false;
__thread HandlerQueue t_handler_queue __attribute__((tls_model("initial-exec")));
// A name set before the thread's first event; copied at registration.
__thread char t_pending_name[kMaxNameBytes] __attribute__((tls_model("initial-exec")));

Tables& tables() {
  static Tables* t = new Tables;  // never destroyed: used from exit handlers
  return *t;
}

namespace {

struct InternalGuard {
  InternalGuard() { ++t_internal; }
  ~InternalGuard() { --t_internal; }
};

// Constant-initialised and never destroyed (std::mutex's destructor is
// trivial): usable from the last exit handler, and it allocates nothing, so
// stop() works when the tracer's own heap could not map (ulimit -v).
std::mutex& lifecycle_mutex() {
  constinit static std::mutex m;
  return m;
}

void copy_name(char (&dst)[kMaxNameBytes], std::string_view name) {
  std::size_t n = std::min(name.size(), sizeof dst - 1);
  std::memcpy(dst, name.data(), n);
  dst[n] = '\0';
}

// First event of a thread in this session. May allocate (pthread_getattr_np
// reads /proc for the main thread: thread_stack.cpp): the caller holds the
// reentrancy guard.
ThreadBuffer* register_thread(Session* s) {
  KeepErrno keep_errno;
  if (abandon_if_foreign(s)) return nullptr;
  void* mem = s->arena.allocate(sizeof(ThreadBuffer));
  ThreadTables* tables = mem ? map_thread_tables() : nullptr;
  Block* first = tables ? s->blocks.get() : nullptr;
  if (!first) {
    unmap_thread_tables(tables);
    return nullptr;
  }
  auto* tb = new (mem) ThreadBuffer;
  tb->tables = tables;
  tb->session = s;
  tb->tid = static_cast<std::uint64_t>(::syscall(SYS_gettid));
  tb->thread_pointer = reinterpret_cast<std::uintptr_t>(__builtin_thread_pointer());
  learn_thread_stack(tb);
  give_thread_signal_stack();
  if (t_pending_name[0]) {
    std::memcpy(tb->name, t_pending_name, sizeof tb->name);
  } else {
    char os_name[16] = {};
    pthread_getname_np(pthread_self(), os_name, sizeof os_name);
    copy_name(tb->name, os_name);
  }
  if (s->stack_cache && s->stack_frames > 0) tb->stack_cache = &tables->stack_cache;
  tb->walk_credit = kInitialWalks * kWalkCost;
  tb->stepped_unwinds_left = kSteppedUnwinds;
  tb->write_block = first;
  tb->read_block = first;
  if ((tb->tally_slot = s->tally.take_slot())) tb->made = tb->tally_slot;
  tb->id = s->next_thread_id.fetch_add(1, std::memory_order_relaxed);
  s->live_threads.fetch_add(1, std::memory_order_relaxed);
  ThreadBuffer* head = s->registry.load(std::memory_order_relaxed);
  do {
    tb->next.store(head, std::memory_order_relaxed);
  } while (!s->registry.compare_exchange_weak(head, tb, std::memory_order_release,
                                              std::memory_order_relaxed));
  watch_thread_exit(tb);
  t_buffer = tb;
  return tb;
}

// Backpressure: when the drain is this far behind (24 blocks of 128 KiB
// = 3 MiB of unconsumed events, besides the block each live thread is
// writing; fewer with many threads, below), a program thread drains a pass
// itself, or, while someone else drains, takes a few blocks more, and past
// those waits rather than mapping more memory, which bounds the tracer's
// footprint (heaptrack gets the same from its pipe). Counting the live
// threads' own blocks keeps a program with hundreds of threads from
// waiting on every block change. A waiting thread sleeps until blocks come
// back (a futex, not a polling nap: naps woke the thread every 50 us to
// preempt the writer it was waiting for). The wait is bounded (200 slices
// of at most 1 ms), so a thread that holds a lock the drain needs (the
// loader lock, inside dlopen) can never deadlock with it: it then maps a
// block anyway.
constexpr std::uint64_t kBacklogBlocks = 24;
// The live threads' own blocks buffer events too (64 threads: 8 MiB), so
// each two of them take one block off the shared backlog, down to this
// many (1 MiB): cross-thread-64's event blocks at its peak 12.0 -> 10 MiB
// (issue 28). A program's thread that never fills its first block (the
// 300 threads of samples/threads) never meets the bound; a single thread's
// backlog is the same 24.
constexpr std::uint64_t kMinBacklogBlocks = 8;
std::uint64_t backlog_bound(std::uint64_t writing) {
  const std::uint64_t shared = kBacklogBlocks >= kMinBacklogBlocks + writing / 2
                                   ? kBacklogBlocks - writing / 2
                                   : kMinBacklogBlocks;
  return writing + shared;
}
// Sleeping leaves a core idle: a thread that finds someone else draining
// takes up to this many blocks past the bound before it does.
constexpr std::uint64_t kOvershootBlocks = 8;
// When program threads drain (drain_sharing.cpp), a thread that takes a
// block drains once this many wait, while their events are still in cache,
// two passes at most: with up to eight, a churn run had 21-23 malloc calls
// of 4-16 ms (passes that compressed a chunk); with two, 2-6, at the same
// speed.
constexpr std::uint64_t kDrainAtBlocks = 6;
constexpr int kPassesPerBlock = 2;
constexpr int kMaxPassesHere = 8;  // at the bound: a malloc call pays for at most this many
constexpr int kWaitSlices = 200;

Block* next_block(Session* s, ThreadBuffer* tb) {
  KeepErrno keep_errno;
  if (abandon_if_foreign(s)) return nullptr;  // its blocks must not reach the parent's file
  tb->active_tick.store(s->clock.raw_now(), std::memory_order_relaxed);
  std::uint64_t writing = s->live_threads.load(std::memory_order_relaxed);
  if (s->program_threads_drain())
    for (int pass = 0; pass < kPassesPerBlock && s->blocks.blocks_out() >= writing + kDrainAtBlocks;
         ++pass)
      if (!s->drain_here()) break;
  std::uint64_t bound = backlog_bound(writing);
  Block* b = s->blocks.get_bounded(bound);
  if (b) return b;
  for (int pass = 0; pass < kMaxPassesHere && s->drain_here(); ++pass)
    if ((b = s->blocks.get_bounded(bound))) return b;
  if ((b = s->blocks.get_bounded(bound + kOvershootBlocks))) return b;
  s->block_waiters.fetch_add(1);
  for (int slice = 0; slice < kWaitSlices; ++slice) {
    // Read before trying: blocks given back after this read change the
    // word, and then the wait returns at once.
    std::uint32_t seen = s->blocks_given_back.load();
    b = s->blocks.get_bounded(bound);
    if (b) break;
    if (s->drain_here()) continue;
    // The writer may be asleep between passes, with no thread holding
    // more than a pass takes (many threads): wake it for every slice.
    s->wake();
    timespec most{0, 1'000'000};
    ::syscall(SYS_futex, &s->blocks_given_back, FUTEX_WAIT_PRIVATE, seen, &most, nullptr, 0);
  }
  s->block_waiters.fetch_sub(1);
  return b ? b : s->blocks.get();
}

// Appends one event to the calling thread's block chain.
__attribute__((noinline)) void append_slow(Session* s, ThreadBuffer* tb, const RawHead& head,
                                           const RawTail* tail, const std::uint64_t* ips) {
  std::uint32_t need =
      static_cast<std::uint32_t>(sizeof(RawHead) + (tail ? sizeof(RawTail) : 0) + head.frames * 8u);
  Block* b = tb->write_block;
  if (tb->write_pos + need > Block::capacity()) {
    Block* fresh = next_block(s, tb);
    if (!fresh) return;  // out of address space: drop rather than crash
    b->next.store(fresh, std::memory_order_release);  // after b's final `used` store
    tb->write_block = b = fresh;
    tb->write_pos = 0;
  }
  unsigned char* p = b->data() + tb->write_pos;
  std::memcpy(p, &head, sizeof head);
  p += sizeof head;
  if (tail) {
    std::memcpy(p, tail, sizeof *tail);
    p += sizeof *tail;
  }
  if (head.frames) std::memcpy(p, ips, head.frames * 8u);
  tb->write_pos += need;
  if (head.kind != kRawRename) ++*tb->made;  // counted before the drain can see it
  b->used.store(tb->write_pos, std::memory_order_release);
}

// The common case inline: a lone head (nearly every heap event: no tail,
// the stack sent before) into room the block has.
[[gnu::always_inline]] inline void append(Session* s, ThreadBuffer* tb, const RawHead& head,
                                          const RawTail* tail, const std::uint64_t* ips) {
  std::uint32_t pos = tb->write_pos;
  if (__builtin_expect(
          tail != nullptr || head.frames != 0 || pos + sizeof(RawHead) > Block::capacity(), 0)) {
    append_slow(s, tb, head, tail, ips);
    return;
  }
  // Word by word, the fourth composed from its fields: a memcpy of the
  // struct reads it back with 16-byte loads that span the narrow stores
  // which built it, and such a load cannot take its data from the store
  // buffer (a store-forwarding stall on every event).
  Block* b = tb->write_block;
  auto* out = reinterpret_cast<std::uint64_t*>(b->data() + pos);
  out[0] = head.time;
  out[1] = head.address;
  out[2] = head.size;
  out[3] = raw_meta_word(head);
  pos += sizeof head;
  tb->write_pos = pos;
  ++*tb->made;  // counted before the drain can see it
  b->used.store(pos, std::memory_order_release);
}

// The calling thread's buffer in session `s`, registered on first use;
// null when it cannot be.
[[gnu::always_inline]] inline ThreadBuffer* buffer_of_this_thread(Session* s) {
  ThreadBuffer* tb = t_buffer;
  if (tb && tb->session == s) return tb;
  InternalGuard deeper;  // registration's allocations are the tracer's, not a handler's
  // libunwind's per-thread trace cache is mapped later, when the thread's
  // stepped unwinds are spent (kSteppedUnwinds: warm_backtrace_cache).
  return register_thread(s);
}

// An event that found the recorder busy on its own thread. Only while
// record_impl appends, at its own guard level (not the tracer's allocations
// made under a deeper guard), is the caller a signal handler: its event is
// queued for the interrupted recorder to append. Anything else under the
// guard is the tracer's own and dropped.
__attribute__((noinline, cold)) void queue_if_from_handler(const Event& e) {
  // A program thread that drains buffers (drain_sharing.cpp) runs the
  // writer's code, whose allocations are the tracer's: not queued. (A
  // handler's events during such a drain are dropped, as before.)
  if (!t_appending || t_internal != 1 || t_draining) return;
  Session* s = g_session.load(std::memory_order_acquire);
  if (!s) return;
  QueuedEvent q{};
  q.head.time = s->clock.raw_now();
  q.head.address = e.address;
  q.head.size = e.size;
  q.head.kind = static_cast<std::uint8_t>(e.kind);
  q.head.detail = e.detail;
  q.tail = RawTail{e.requested, e.aux, e.pool, e.stack};
  q.has_tail = true;
  q.head.flags = kRawHasTail;
  if (!t_handler_queue.push(q)) s->lost_in_handlers.fetch_add(1, std::memory_order_relaxed);
}

// Appends the handlers' queued events (no stacks: they were made in a
// handler that interrupted the unwinder's caller). A handler may queue more
// while this runs; they are taken too.
__attribute__((noinline, cold)) void append_queued(Session* s, ThreadBuffer* tb) {
  QueuedEvent q;
  while (t_handler_queue.pop(q)) append(s, tb, q.head, q.has_tail ? &q.tail : nullptr, nullptr);
}

// Marks the span in which the thread's buffer is half-written.
// Restores the outer value: a handler that ran a whole record_impl before
// the interrupted one took its guard leaves the mark as it found it.
struct Appending {
  bool outer = t_appending;
  Appending() {
    t_appending = true;
    std::atomic_signal_fence(std::memory_order_seq_cst);
  }
  ~Appending() {
    std::atomic_signal_fence(std::memory_order_seq_cst);
    t_appending = outer;
  }
};

// The head of event `e` stamped `time`, without a stack yet; `tail` holds
// what an event that does not fit the head alone carries (then the head's
// kRawHasTail flag is set). Heap events fit the head alone.
[[gnu::always_inline]] inline RawHead raw_head_of(const Event& e, std::uint64_t time,
                                                  RawTail& tail) {
  RawHead raw;
  raw.time = time;
  raw.address = e.address;
  raw.size = e.size;
  raw.kind = static_cast<std::uint8_t>(e.kind);
  raw.detail = e.detail;
  raw.frames = 0;
  raw.stack_slot = 0;
  tail = RawTail{e.requested, e.aux, e.pool, e.stack};
  bool compact =
      e.aux == 0 && e.stack == 0 && e.pool < 256 && (e.requested == e.size || e.requested == 0);
  raw.pool = compact ? static_cast<std::uint8_t>(e.pool) : 0;
  raw.flags = !compact ? kRawHasTail : e.requested == e.size ? kRawRequestedIsSize : 0;
  return raw;
}

// Names the event's stack by the thread's sent-stack slot of its hash; the
// first event with that stack in the slot sends its `count` frames.
[[gnu::always_inline]] inline void name_stack(RawHead& raw, ThreadBuffer* tb, std::uint64_t hash,
                                              int count) {
  std::uint32_t slot = static_cast<std::uint32_t>(hash >> 32) & (ThreadBuffer::kStackSlots - 1);
  raw.stack_slot = static_cast<std::uint16_t>(slot + 1);
  if (tb->tables->sent_stack_hash[slot] != hash) {  // new here: send the frames
    tb->tables->sent_stack_hash[slot] = hash;
    raw.frames = static_cast<std::uint16_t>(count);
  }
}

// Appends `raw` (with `tail` when flagged, and the frames it sends), then
// whatever signal handlers queued meanwhile.
[[gnu::always_inline]] inline void append_event(Session* s, ThreadBuffer* tb, const RawHead& raw,
                                                const RawTail& tail, const std::uint64_t* frames) {
  append(s, tb, raw, (raw.flags & kRawHasTail) ? &tail : nullptr, frames);
  if (__builtin_expect(!t_handler_queue.empty(), 0)) append_queued(s, tb);
}

// CPython 3.11: Python frames join the native ones. Not for a munmap: the
// interpreter unmaps a frame-stack chunk while its current frame still
// points into it (python_frames.hpp). The cache holds the native chain only
// (validated as any other); the Python frames are read anew for every
// event, as they differ where the native chain does not.
[[gnu::always_inline]] inline void join_python_frames(ThreadBuffer* tb, const Event& e,
                                                      CapturedStack& stack, std::uint64_t* ips) {
  if (!python::g_enabled || !stack.count || e.kind == EventKind::segment_release) return;
  if (stack.frames != ips) std::memmove(ips, stack.frames, stack.count * sizeof *ips);
  stack.frames = ips;
  if (int spliced = python::splice(ips, stack.count, kMaxStackDepth); spliced != stack.count) {
    tb->tables->spliced_native_hash[stack.hash % ThreadBuffer::kSplicedSlots] = stack.hash;
    stack.hash = hash_stack(ips, stack.count = spliced);
  }
}

// Not inlined, and its callers are kept out of tail position (the empty asm
// after each call), so its frame address keys the stack cache and its
// caller's frame is on the stack (skipped with the library's other frames).
__attribute__((noinline)) void record_impl(const Event& e, int skip_frames, bool capture) {
  if (t_internal) {
    queue_if_from_handler(e);
    return;
  }
  if (detail::dropped_while_paused(e.kind)) return;  // memtrail_pause()
  Session* s = g_session.load(std::memory_order_acquire);
  if (!s) return;
  Appending appending;  // outlives the guard: no window where both are off
  InternalGuard guard;
  ThreadBuffer* tb = buffer_of_this_thread(s);
  if (!tb) return;
  RawTail tail;
  RawHead raw = raw_head_of(e, s->clock.raw_now(), tail);
  std::uint64_t ips[kMaxStackDepth + kCaptureSlack];
  CapturedStack stack{ips};
  if (capture && s->stack_frames > 0) {
    auto key = reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0));
    stack = capture_stack(s, tb, skip_frames, key, ips);
    join_python_frames(tb, e, stack, ips);
    if (stack.count) name_stack(raw, tb, stack.hash, stack.count);
  }
  append_event(s, tb, raw, tail, stack.frames);
}

// An event whose stack was taken before the session existed (the preload's
// early events): its frames are the unw_backtrace of the taker, whose own
// frames (in the recorder's modules) select_first skips here.
void record_frames_impl(const Event& e, const std::uint64_t* ips, int n) {
  if (t_internal) {
    queue_if_from_handler(e);
    return;
  }
  Session* s = g_session.load(std::memory_order_acquire);
  if (!s) return;
  Appending appending;
  InternalGuard guard;
  ThreadBuffer* tb = buffer_of_this_thread(s);
  if (!tb) return;
  RawTail tail;
  RawHead raw = raw_head_of(e, s->clock.raw_now(), tail);
  bool found = false;
  int first = select_first(ips, n, 0, nullptr, found);
  int count = s->stack_frames > 0 && n > first ? std::min(n - first, s->stack_frames) : 0;
  if (count) name_stack(raw, tb, hash_stack(ips + first, count), count);
  append_event(s, tb, raw, tail, ips + first);
}

}  // namespace

void append_rename(Session* s, ThreadBuffer* tb, const char (&name)[kMaxNameBytes]) {
  RawHead raw{};
  raw.kind = kRawRename;
  raw.time = s->clock.raw_now();
  raw.frames = kMaxNameBytes / 8;
  std::uint64_t words[kMaxNameBytes / 8];
  std::memcpy(words, name, sizeof words);
  append_slow(s, tb, raw, nullptr, words);
}

// ---- sessions ---------------------------------------------------------------

namespace {

// <name>.mtr if nobody has it yet, else <name>.1.mtr, <name>.2.mtr, ...,
// claimed with O_EXCL so two images racing for a name cannot share one.
std::string claim_fresh_path(const std::string& path) {
  std::size_t slash = path.rfind('/');
  std::size_t dot = path.rfind('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash) || dot == slash + 1)
    dot = path.size();
  for (int i = 0; i < 10000; ++i) {
    std::string candidate =
        i == 0 ? path : path.substr(0, dot) + "." + std::to_string(i) + path.substr(dot);
    int fd = ::open(candidate.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0) {
      ::close(fd);
      return candidate;
    }
    if (errno != EEXIST) break;
  }
  return path;  // let the writer report the problem
}

// libunwind's caching policy, once per image (a fork child inherits it):
// per thread, no lock on the program's threads. libunwind's validation
// pipe, opened at this first use, is two numbers that are never
// descriptors (preload/unwind_validation.hpp): nothing to place. No
// allocation: it may run inside malloc.
void init_libunwind() {
  static bool done = false;
  if (done) return;
  done = true;
  unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
}

// This image was exec'd by a traced image of the same pid (see stop_for_exec).
bool exec_of_traced_image() {
  const char* v = std::getenv("MEMTRAIL_EXEC_PID");
  return v && std::strtol(v, nullptr, 10) == static_cast<long>(::getpid());
}

void add_internal_code_locked(const void* address) {
  Dl_info info;
  if (!dladdr(address, &info) || !info.dli_fbase) return;
  struct Find {
    std::uintptr_t base;
  } find{reinterpret_cast<std::uintptr_t>(info.dli_fbase)};
  dl_iterate_phdr(
      [](dl_phdr_info* m, std::size_t, void* data) -> int {
        auto* f = static_cast<Find*>(data);
        bool mine = false;
        for (int i = 0; i < m->dlpi_phnum && !mine; ++i)
          mine = m->dlpi_phdr[i].p_type == PT_LOAD && m->dlpi_phdr[i].p_offset == 0 &&
                 m->dlpi_addr + m->dlpi_phdr[i].p_vaddr == f->base;
        if (!mine) return 0;
        for (int i = 0; i < m->dlpi_phnum; ++i) {
          const auto& ph = m->dlpi_phdr[i];
          if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X)) continue;
          int n = g_internal_count.load(std::memory_order_relaxed);
          std::uintptr_t low = m->dlpi_addr + ph.p_vaddr;
          bool known = false;
          for (int k = 0; k < n; ++k) known |= g_internal[k].low == low;
          if (known || n == kMaxInternalRanges) continue;
          g_internal[n] = CodeRange{low, low + ph.p_memsz};
          g_internal_count.store(n + 1, std::memory_order_release);
        }
        return 1;
      },
      &find);
}

// libmemtrail.so's ranges join the internal ones; the one holding
// record_impl also becomes g_recorder_code. Set once: a later start() finds
// the same library.
void add_recorder_code_locked() {
  auto here = reinterpret_cast<std::uintptr_t>(&record_impl);
  add_internal_code_locked(reinterpret_cast<const void*>(here));
  if (g_recorder_code.high != 0) return;
  int n = g_internal_count.load(std::memory_order_relaxed);
  for (int i = 0; i < n; ++i)
    if (here - g_internal[i].low < g_internal[i].high - g_internal[i].low)
      g_recorder_code = g_internal[i];
}

// The session could not start: its file ends with a mark that says why
// (`reason`), and so does one line on stderr.
void finish_untraced(Session* s, const std::string& reason) {
  std::string text = "tracing stopped: " + reason;
  detail::diagnostic("memtrail: %s; the program runs untraced\n", text.c_str());
  try {
    std::uint32_t id = intern_string(text);
    {
      std::lock_guard lock(tables().mutex);
      for (std::uint32_t i = 1; i <= id; ++i) s->writer->add_string(i, tables().strings[i - 1]);
    }
    Event e;
    e.kind = EventKind::mark;
    e.aux = id;
    s->writer->add_event(e);
    s->writer->finish();
    s->tally.remove();
  } catch (const std::exception&) {
    // The line above said it; the file then has no end marker either.
  }
  s->statm.release();
}

// See Session::fork_probe.
volatile std::uint32_t* make_fork_probe() {
  void* page = ::mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (page == MAP_FAILED) return nullptr;
  if (::madvise(page, 4096, MADV_WIPEONFORK) != 0) {
    ::munmap(page, 4096);
    return nullptr;
  }
  detail::note_own_mapped(page, 4096, detail::OwnPurpose::other);
  auto* word = static_cast<volatile std::uint32_t*>(page);
  *word = 1;
  return word;
}

}  // namespace

bool start_session(const RecorderOptions& options, bool fork_child, bool exclusive,
                   const Session* inherit, const char* why) {
  auto s = std::make_unique<Session>();
  s->options = options;
  s->pid = static_cast<int>(::getpid());
  s->fork_probe = make_fork_probe();
  int opened = -1;  // a fork child's file, created through the run directory's descriptor
  if (is_run_directory_output(options.output)) {
    s->path = claim_run_file(options.output, fork_child, exclusive, &opened);
  } else {
    s->path = expand_output_path(options.output, fork_child);
    if (exclusive) s->path = claim_fresh_path(s->path);
  }
  s->clock.begin();
  s->start_monotonic_ns = s->clock.start_ns;
  s->stack_frames = options.stacks ? std::clamp(options.stack_depth, 0, kMaxStackDepth) : 0;
  s->stack_cache = options.stack_cache;
  s->track_live.store(options.track_live_heap, std::memory_order_relaxed);
  if (s->stack_frames > 0) init_libunwind();
  try {
    s->writer =
        opened >= 0
            ? std::make_unique<TraceWriter>(opened, s->path, make_header(s->start_monotonic_ns))
            : std::make_unique<TraceWriter>(s->path, make_header(s->start_monotonic_ns));
  } catch (const std::exception& e) {
    detail::diagnostic("memtrail: %s\n", e.what());
    if (is_run_directory_output(options.output)) note_missing_trace(e.what());
    return false;
  }
  s->writer->keep_space_free();  // the program's own files need the space more
  if (is_run_directory_output(options.output) &&
      s->tally.create(options.output, s->path + kTallySuffix))
    s->writer->on_chunk_written(
        [](void* session, std::uint64_t counted) {
          static_cast<Session*>(session)->tally.set_written(counted);
        },
        s.get(), &s->events_drained);
  if (s->stack_frames > 0) python::detect();  // before tracing: dlsym may allocate
  if (inherit && inherit->track_live.load(std::memory_order_acquire)) {
    s->track_live.store(true, std::memory_order_relaxed);
    s->inherit_from = inherit;  // written by the first drain
    s->inherit_why = why;
  }
  s->address_model = detail::address_model_from_environment();
  if (s->address_model != detail::AddressModel::automatic)
    s->writer->set_address_model(s->address_model == detail::AddressModel::always);
  cpu_set_t affinity;
  if (sched_getaffinity(0, sizeof affinity, &affinity) == 0)
    s->cores = std::max(1, CPU_COUNT(&affinity));
  Session* raw = s.release();
  // The thread inherits the mask in force when it is created (no window in
  // which it could take a signal).
  sigset_t blocked = writer_blocked_signals(), old_mask;
  pthread_sigmask(SIG_BLOCK, &blocked, &old_mask);
  raw->table_step.store(1, std::memory_order_release);  // hand the file over (writer_thread.cpp)
  try {
    raw->writer_thread = std::thread([raw] { raw->writer_main(); });
  } catch (const std::exception& e) {  // system_error, or bad_alloc for its state
    // A limit the program runs under (ulimit -v, RLIMIT_NPROC) left no
    // room for the thread's stack: the program runs on untraced, as it
    // would have without the tracer, and the trace says why.
    pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
    finish_untraced(raw, std::string("could not start the writer thread: ") + e.what());
    return false;
  }
  pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  raw->hand_over_trace_file();
  g_session.store(raw, std::memory_order_release);
  detail::g_tracing.store(true, std::memory_order_release);
  return true;
}

void stop_session(bool exit_hook) {
  Session* s = g_session.load(std::memory_order_acquire);
  if (!s || abandon_if_foreign(s)) return;
  if (std::uint64_t lost = s->lost_in_handlers.load(std::memory_order_relaxed))
    detail::record_lost(lost, LostReason::signal_handler,
                        "in signal handlers that interrupted the recorder (their queue was full)");
  s->request_flush(5000);  // final drain of the program's threads
  if (exit_hook) {
    // The hook's own events must be recorded: lift the caller's guard.
    int saved = t_internal;
    t_internal = 0;
    run_exit_hook();
    t_internal = saved;
  }
  g_stopping_session.store(s, std::memory_order_release);
  detail::g_tracing.store(false, std::memory_order_release);
  g_session.store(nullptr, std::memory_order_release);
  s->exit_requested.store(true, std::memory_order_release);
  s->wake();
  if (s->writer_thread.joinable()) s->writer_thread.join();
  s->heap_probe.stop();
  detail::report_own_mappings();
  g_stopping_session.store(nullptr, std::memory_order_release);
  // The Session is never freed: a thread still inside record_impl may hold it.
  // Its blocks are returned to the system; its small bookkeeping stays.
}

}  // namespace runtime

using runtime::g_session;
using runtime::InternalGuard;
using runtime::tables;

namespace detail {

void record_slow(const Event& event, int skip_frames) {
  runtime::record_impl(event, skip_frames, true);
  asm volatile("" ::: "memory");
}

bool record_unwalked(const Event& event) {
  if (runtime::t_exited) return false;
  runtime::record_impl(event, 0, false);
  asm volatile("" ::: "memory");
  return true;
}

void record_unwalked_past_guard(Event event) {
  // Exit-time events (reachability) are recorded from the exit hook, which
  // runs inside stop() under the reentrancy guard: lift it for this call.
  int saved = runtime::t_internal;
  runtime::t_internal = 0;
  runtime::record_impl(event, 0, false);
  runtime::t_internal = saved;
  asm volatile("" ::: "memory");
}

void record_lost(std::uint64_t count, LostReason reason, std::string_view words) {
  if (count == 0 || !g_session.load(std::memory_order_acquire)) return;
  Event e;
  e.kind = EventKind::mark;
  e.detail = static_cast<std::uint8_t>(MarkDetail::lost);
  e.size = count;
  e.requested = static_cast<std::uint8_t>(reason);
  e.aux = intern_string(words);
  record_unwalked_past_guard(e);
}

void record_with_frames(const Event& event, const std::uint64_t* ips, int n) {
  runtime::record_frames_impl(event, ips, n);
}

int backtrace_here(std::uint64_t* ips, int limit) {
  const int saved_errno = errno;  // a start-up malloc keeps errno
  runtime::init_libunwind();
  errno = saved_errno;
  return runtime::backtrace_keeping_errno(ips, limit);
}

ScopedInternal::ScopedInternal() noexcept {
  ++runtime::t_internal;
}
ScopedInternal::~ScopedInternal() {
  --runtime::t_internal;
}
bool thread_is_internal() noexcept {
  return runtime::t_internal > 0;
}

bool recorder_started() noexcept {
  return g_session.load(std::memory_order_acquire) != nullptr;
}

void flush_all_threads() {
  if (runtime::Session* s = g_session.load(std::memory_order_acquire)) s->request_flush(2000);
}

void flush_all_threads_lean() {
  runtime::Session* s = g_session.load(std::memory_order_acquire);
  if (!s) return;
  s->release_scratch_asked.store(true, std::memory_order_release);
  s->request_flush(2000);
}

void notify_modules_changed() {
  if (runtime::Session* s = g_session.load(std::memory_order_acquire))
    s->modules_dirty.store(true, std::memory_order_release);
}

void set_track_live_heap(bool on) {
  if (runtime::Session* s = g_session.load(std::memory_order_acquire))
    s->track_live.store(on, std::memory_order_release);
}

void set_device_free_probe(std::uint64_t (*fn)()) {
  runtime::g_device_free_probe.store(fn, std::memory_order_release);
}

void set_heap_is_glibc(bool glibc) {
  runtime::g_glibc_heap.store(glibc, std::memory_order_relaxed);
}

std::vector<LiveBlock> live_blocks() {
  std::vector<LiveBlock> out;
  runtime::Session* s = g_session.load(std::memory_order_acquire);
  if (!s) return out;
  InternalGuard guard;
  std::lock_guard lock(s->live_mutex);
  out.reserve(s->live.size());
  s->live.for_each([&](std::uint64_t address, const runtime::LiveEntry& e) {
    out.push_back(LiveBlock{address, e.size, e.stack, e.thread, e.time_ns});
  });
  return out;
}

std::uint64_t trace_time_ns() noexcept {
  runtime::Session* s = g_session.load(std::memory_order_acquire);
  return s ? s->now_ns() : 0;
}

void reset_heap_window(std::uint64_t since_ns) {
  runtime::Session* s = g_session.load(std::memory_order_acquire);
  if (!s) return;
  InternalGuard guard;
  std::lock_guard lock(s->live_mutex);
  HeapWindow w;
  w.since_ns = since_ns;
  s->live.for_each([&](std::uint64_t, const runtime::LiveEntry& e) {
    if (e.time_ns < since_ns) return;
    w.live_bytes += e.size;
    w.live_blocks += 1;
  });
  w.peak_bytes = w.live_bytes;
  s->window = w;
}

HeapWindow heap_window() {
  runtime::Session* s = g_session.load(std::memory_order_acquire);
  if (!s) return {};
  InternalGuard guard;
  std::lock_guard lock(s->live_mutex);
  return s->window;
}

std::string trace_path() {
  runtime::Session* s = g_session.load(std::memory_order_acquire);
  if (!s) return {};
  InternalGuard guard;
  return s->path;
}

StackCacheCounts stack_cache_counts() {
  runtime::Session* s = g_session.load(std::memory_order_acquire);
  runtime::ThreadBuffer* tb = runtime::t_buffer;
  if (!s || !tb || tb->session != s) return {};
  return {tb->stack_cache_hits, tb->stack_cache_misses, tb->stack_cache_unwalkable,
          tb->stack_cache_walks};
}

std::uint64_t program_thread_drains() {
  runtime::Session* s = g_session.load(std::memory_order_acquire);
  return s ? s->program_thread_drains.load(std::memory_order_relaxed) : 0;
}

std::vector<ThreadRecord> thread_registry() {
  std::vector<ThreadRecord> out;
  runtime::Session* s = g_session.load(std::memory_order_acquire);
  if (!s) return out;
  InternalGuard guard;
  for (auto* tb = s->registry.load(std::memory_order_acquire); tb; tb = tb->next)
    out.push_back(ThreadRecord{tb->id, tb->tid, tb->stack_low, tb->stack_high, tb->thread_pointer,
                               tb->exited.load(std::memory_order_acquire)});
  return out;
}

}  // namespace detail

// ---- public API ----------------------------------------------------------------

bool start(const RecorderOptions& options) {
  InternalGuard guard;
  std::lock_guard lock(runtime::lifecycle_mutex());
  if (g_session.load(std::memory_order_acquire)) return true;
  runtime::install_process_hooks();
  runtime::add_recorder_code_locked();
  return runtime::start_session(options, false, runtime::exec_of_traced_image());
}

bool start(const std::string& path) {
  RecorderOptions o;
  o.output = path;
  return start(o);
}

void stop() {
  InternalGuard guard;
  std::lock_guard lock(runtime::lifecycle_mutex());
  runtime::stop_session(true);
}

namespace {
RecorderOptions* g_options_before_exec = nullptr;  // kept for a failed exec
// The session an exec finished: a failed exec's new trace carries its live
// blocks (Sessions are never freed).
const runtime::Session* g_session_before_exec = nullptr;
}  // namespace

bool detail::stop_for_exec() {
  InternalGuard guard;
  std::lock_guard lock(runtime::lifecycle_mutex());
  runtime::Session* s = g_session.load(std::memory_order_acquire);
  if (!s) return false;
  if (!g_options_before_exec) g_options_before_exec = new RecorderOptions;
  *g_options_before_exec = s->options;
  // The trace's last event: the analyzer leaves the blocks live here
  // unclassified, as Valgrind does for an image that exec'd.
  Event mark;
  mark.kind = EventKind::mark;
  mark.detail = static_cast<std::uint8_t>(MarkDetail::exec);
  mark.aux = intern_string(
      "the image called exec: the blocks live now are not leak-checked (a failed exec goes on "
      "in a new trace that carries them)");
  record_unwalked_past_guard(mark);
  runtime::stop_session(false);
  g_session_before_exec = s;
  return true;
}

void detail::stop_before_seccomp() {
  if (!g_session.load(std::memory_order_acquire)) return;
  constexpr std::string_view kWhy =
      "tracing stopped: the program installs a seccomp filter, which may forbid the system calls "
      "the tracer makes; later events are not recorded";
  record_mark(kWhy);
  InternalGuard guard;
  std::lock_guard lock(runtime::lifecycle_mutex());
  if (!g_session.load(std::memory_order_acquire)) return;
  runtime::stop_session(false);
  detail::diagnostic("memtrail: %.*s\n", static_cast<int>(kWhy.size()), kWhy.data());
}

void detail::resume_after_failed_exec() {
  InternalGuard guard;
  std::lock_guard lock(runtime::lifecycle_mutex());
  if (g_session.load(std::memory_order_acquire) || !g_options_before_exec) return;
  runtime::start_session(*g_options_before_exec, false, true, g_session_before_exec,
                         "carried over a failed exec from the image's earlier trace");
}

void detail::add_forwarder(const void* function_start) {
  InternalGuard guard;
  std::lock_guard lock(runtime::lifecycle_mutex());
  auto start = reinterpret_cast<std::uintptr_t>(function_start);
  int n = runtime::g_forwarder_count.load(std::memory_order_relaxed);
  if (std::find(runtime::g_forwarder, runtime::g_forwarder + n, start) !=
          runtime::g_forwarder + n ||
      n == runtime::kMaxForwarders)
    return;
  runtime::g_forwarder[n] = start;
  runtime::g_forwarder_count.store(n + 1, std::memory_order_release);
}

void detail::add_internal_code(const void* address_in_module) {
  InternalGuard guard;
  std::lock_guard lock(runtime::lifecycle_mutex());
  runtime::add_internal_code_locked(address_in_module);
}

void flush() {
  InternalGuard guard;
  detail::flush_all_threads();
}

namespace {

// The tables' lock as a program thread takes it. The writer needs the lock
// to finish the trace (emit_tables): a SIGTERM & co. landing while this
// thread holds it ran the handler, which waits for the writer, while the
// writer waited for the lock, and the trace ended at its last flush after
// the handler's timeout (a Pool worker stopped while interning a Python
// frame). The signals whose handler finishes the trace are held until the
// lock is released, and then taken.
class TablesLock {
 public:
  TablesLock() {
    static const sigset_t held = runtime::writer_blocked_signals();
    pthread_sigmask(SIG_BLOCK, &held, &mask_before_);
    tables().mutex.lock();
  }
  ~TablesLock() {
    tables().mutex.unlock();
    pthread_sigmask(SIG_SETMASK, &mask_before_, nullptr);
  }
  TablesLock(const TablesLock&) = delete;
  TablesLock& operator=(const TablesLock&) = delete;

 private:
  sigset_t mask_before_;
};

}  // namespace

std::uint32_t register_pool(const PoolInfo& info) {
  InternalGuard guard;
  auto& t = tables();
  TablesLock lock;
  PoolInfo p = info;
  p.id = static_cast<std::uint32_t>(t.pools.size() + 1);
  t.pools.push_back(p);
  return p.id;
}

std::uint32_t register_scope(std::string_view name, ScopeKind kind, std::uint32_t pool) {
  InternalGuard guard;
  auto& t = tables();
  TablesLock lock;
  ScopeInfo sc{static_cast<std::uint32_t>(t.scopes.size() + 1), std::string(name), kind, pool};
  t.scopes.push_back(sc);
  return sc.id;
}

std::uint32_t intern_string(std::string_view text) {
  InternalGuard guard;
  auto& t = tables();
  TablesLock lock;
  auto [it, inserted] = t.string_ids.try_emplace(std::string(text), 0);
  if (inserted) {
    t.strings.emplace_back(text);
    it->second = static_cast<std::uint32_t>(t.strings.size());
  }
  return it->second;
}

void set_thread_name(std::string_view name) {
  if (runtime::t_internal) return;
  InternalGuard guard;
  std::string os_name(name.substr(0, 15));
  pthread_setname_np(pthread_self(), os_name.c_str());
  runtime::copy_name(runtime::t_pending_name, name);
  // A registered thread's rename travels in its own event stream, so the
  // trace shows the name each event was recorded under.
  runtime::ThreadBuffer* tb = runtime::t_buffer;
  runtime::Session* s = g_session.load(std::memory_order_acquire);
  if (tb && s && tb->session == s) runtime::append_rename(s, tb, runtime::t_pending_name);
}

std::uint32_t heap_pool() {
  static std::atomic<std::uint32_t> id{0};
  std::uint32_t v = id.load(std::memory_order_acquire);
  if (v) return v;
  InternalGuard guard;
  static std::mutex once;
  std::lock_guard lock(once);
  v = id.load(std::memory_order_relaxed);
  if (!v) {
    v = register_pool(PoolInfo{0, 0, "malloc", PoolKind::heap, MemorySpace::host, -1});
    id.store(v, std::memory_order_release);
  }
  return v;
}

void record_mark(std::string_view text) {
  if (!tracing() || runtime::t_internal) return;
  Event e;
  e.kind = EventKind::mark;
  e.aux = intern_string(text);
  runtime::record_impl(e, 0, true);  // skips record_impl and record_mark
  asm volatile("" ::: "memory");
}

}  // namespace memtrail
