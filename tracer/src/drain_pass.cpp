// One drain pass (Session::drain): the events the program threads have
// published, merged by time and handed to the TraceWriter, in four stages:
//
//   1. pass_cut: the time before which this pass writes events;
//   2. open_cursors: what each thread has published, fixed now;
//   3. emit_tables: every string, pool, scope and module an event names;
//   4. merge_events: the threads' events merged by time, each turned into
//      an Event (stack-trie id, live-heap map) and encoded;
//   5. give_back_blocks: the blocks read go back to the program threads.
//
// Why a cut: threads are read one after another, so without one a free
// read from thread B could reach the file before the alloc of the same
// block by thread A (published before the free, but after A's buffer was
// read, or by a thread registered after the registry was read). Only events
// stamped before `cut` are written now. A free stamped before the cut
// happened after its alloc was published, so before this drain started
// reading, so the alloc is in this drain too. Later events stay where they
// are, unread, for the next drain; the exit drain takes everything.
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <climits>
#include <cstring>

#include "memtrail/detail/heap_window.hpp"
#include "runtime.hpp"

namespace memtrail::runtime {

namespace {

// Blocks (32 KiB each) one drain pass takes from a thread; see pass_cut().
constexpr int kDrainBlocksPerThread = 2;

// The threads' next events in time order (ties: the thread read first, as a
// stable merge of the runs). Two threads (the common case) take turns at
// random: the pick between them is branch-free (a mispredicted branch per
// event cost more than the heap); more threads keep a min-heap in `order`.
// A local of the merge loop, inlined: its fields stay in registers across
// the encoder's opaque calls.
class CursorMerge {
 public:
  using DrainCursor = Session::DrainCursor;
  CursorMerge(DrainCursor* cursors, std::uint32_t* order, std::size_t pending)
      : cur_(cursors), order_(order), pending_(pending) {
    if (pending_ > 2)
      for (std::size_t i = pending_ / 2; i-- > 0;) sift_down(i);
  }
  std::size_t pending() const { return pending_; }
  // The place in `order` of the cursor with the earliest event.
  [[gnu::always_inline]] std::size_t top() const {
    // With two cursors `order` is unordered (it never grows back to three).
    return pending_ == 2 ? std::size_t{before(order_[1], order_[0])} : 0;
  }
  DrainCursor& at(std::size_t top) const { return cur_[order_[top]]; }
  // The cursor at `top` moved to its next event (`has_next`) or ran out.
  [[gnu::always_inline]] void moved(std::size_t top, bool has_next) {
    if (!has_next) order_[top] = order_[--pending_];
    if (pending_ > 2) sift_down(0);
  }

 private:
  bool before(std::uint32_t a, std::uint32_t b) const {
    const DrainCursor &x = cur_[a], &y = cur_[b];
    return (x.time < y.time) | ((x.time == y.time) & (x.order < y.order));
  }
  void sift_down(std::size_t i) {
    for (;;) {
      std::size_t l = 2 * i + 1, best = i;
      if (l < pending_ && before(order_[l], order_[best])) best = l;
      if (l + 1 < pending_ && before(order_[l + 1], order_[best])) best = l + 1;
      if (best == i) return;
      std::swap(order_[i], order_[best]);
      i = best;
    }
  }
  DrainCursor* cur_;
  std::uint32_t* order_;
  std::size_t pending_;  // cursors with an event left: order_[0, pending_)
};

// The Event of a raw record (stack aside); `explicit_stack` gets the
// tail's stack id (0 without a tail).
[[gnu::always_inline]] inline Event event_of(const RawHead& raw, const std::uint64_t* record,
                                             std::uint32_t thread, SessionClock& clk,
                                             std::uint32_t& explicit_stack) {
  Event e;
  e.time_ns = clk.to_ns(raw.time);
  e.thread = thread;
  e.kind = static_cast<EventKind>(raw.kind);
  e.detail = raw.detail;
  e.address = raw.address;
  e.size = raw.size;
  explicit_stack = 0;
  if (raw.flags & kRawHasTail) {
    RawTail tail;
    std::memcpy(&tail, record + kHeadWords, sizeof tail);
    e.pool = tail.pool;
    e.requested = tail.requested;
    e.aux = tail.aux;
    explicit_stack = tail.stack;
  } else {
    e.pool = raw.pool;
    e.requested = (raw.flags & kRawRequestedIsSize) ? raw.size : 0;
    e.aux = 0;
  }
  return e;
}

// The heap window (reset_heap_window) counts blocks allocated since a moment.
struct WindowCount {
  detail::HeapWindow win{};
  void add(const LiveEntry& b) {
    if (b.time_ns < win.since_ns) return;
    win.live_bytes += b.size;
    win.live_blocks += 1;
    if (win.live_bytes > win.peak_bytes) win.peak_bytes = win.live_bytes;
  }
  void remove(const LiveEntry& b) {
    if (b.time_ns < win.since_ns) return;
    win.live_bytes -= b.size;
    win.live_blocks -= 1;
  }
};

// A heap block's live-map entry also holds its place in the writer's
// chunks: one probe serves the map and the encoder. False when `e` is no
// alloc or free (the caller adds it plainly).
[[gnu::always_inline]] inline bool add_heap_event(const Event& e, LiveHeap& live,
                                                  WindowCount& window, TraceWriter* w) {
  if (e.kind == EventKind::alloc || e.kind == EventKind::reuse) {
    LiveEntry entry{e.size, e.time_ns, e.stack, e.thread, {}}, lost;
    bool had;
    LiveEntry* stored = live.put(e.address, entry, had, lost);
    if (had) window.remove(lost);  // its free was lost
    window.add(entry);
    w->add_tracked_event(e, stored->chunk_ref, 0);
    return true;
  }
  if (e.kind == EventKind::free) {
    LiveEntry freed{};
    if (live.take(e.address, freed)) window.remove(freed);
    w->add_tracked_event(e, freed.chunk_ref, freed.size);
    return true;
  }
  return false;
}

}  // namespace

// `c`'s thread had exited before the pass, and the pass read its last
// event: it will have no more. Once cursor_next() returned false.
bool Session::thread_drained(const DrainCursor& c) {
  return c.exited && !c.stopped && c.chain_end && c.block == c.last;
}

bool Session::cursor_next_block(DrainCursor& c) {
  for (;;) {
    // A block before `last` was final (it had a successor) at the snapshot.
    c.limit = c.block == c.last ? c.last_used : c.block->used.load(std::memory_order_acquire);
    if (c.pos < c.limit) return true;
    if (c.block == c.last) return false;
    consumed.push_back(c.block);
    c.block = c.block->next.load(std::memory_order_acquire);
    c.pos = 0;
  }
}

// A pass takes a few blocks per thread, so blocks go back to waiting
// program threads while the writer works on the next pass, instead of
// program threads and writer taking turns on the whole backlog: the cut
// stops before the first event of a thread's block past its share. Events
// of other threads past that cut are left unread in their blocks. `more`:
// some thread had more than its share.
std::uint64_t Session::pass_cut(ThreadBuffer* threads, bool exiting, bool& more) {
  more = false;
  if (exiting) return UINT64_MAX;
  std::uint64_t cut = clock.raw_now();
  for (auto* tb = threads; tb; tb = tb->next) {
    if (tb->retired) continue;
    Block* b = tb->read_block;
    for (int k = 0; k < kDrainBlocksPerThread && b; ++k)
      b = b->next.load(std::memory_order_acquire);
    if (b && b->used.load(std::memory_order_acquire) > 0) {
      std::uint64_t first;
      std::memcpy(&first, b->data(), sizeof first);
      cut = std::min(cut, first);
      more = true;
    }
  }
  return cut;
}

// What each thread has published, fixed now: the last block this pass may
// read and its `used`. Everything read was published before the tables are
// emitted, so every pool, scope and string an event names is in the file
// before it. Leaves in `heap` the cursors with an event before `cut`.
void Session::open_cursors(ThreadBuffer* threads, bool exiting, std::uint64_t cut) {
  cursors.clear();
  heap.clear();
  for (auto* tb = threads; tb; tb = tb->next) {
    thread_tids[tb->id] = tb->tid;
    if (tb->id >= threads_by_id.size()) threads_by_id.resize(tb->id + 1, nullptr);
    threads_by_id[tb->id] = tb;
    if (tb->retired) continue;
    DrainCursor c;
    c.tb = tb;
    c.thread = tb->id;
    c.exited = tb->exited.load(std::memory_order_acquire);  // before its events
    c.block = tb->read_block;
    c.pos = tb->read_pos;
    Block* b = tb->read_block;
    // Blocks past the share hold only events at or after the cut.
    for (int hops = 0;; ++hops) {
      Block* next = b->next.load(std::memory_order_acquire);  // before `used`: then it is final
      std::uint32_t used = b->used.load(std::memory_order_acquire);
      if (!next || (!exiting && hops == kDrainBlocksPerThread)) {
        c.last = b;
        c.last_used = used;
        c.chain_end = !next;
        break;
      }
      b = next;
    }
    c.order = static_cast<std::uint32_t>(cursors.size());
    cursors.push_back(c);
  }
  for (std::uint32_t i = 0; i < cursors.size(); ++i)
    if (cursor_next(cursors[i], cut)) heap.push_back(i);
}

// Merges the threads' events by time as they are encoded: each thread's
// events are in time order. Each event is read once, where it lies, right
// before it is encoded: an index of all the pass's events, merged and then
// read again, pulled every event into the cache twice (the pass's blocks and
// index outgrew L2). The loop's state lives in locals: the encoder calls in
// it are opaque, so members would be loaded again after every event. The
// clock's and the heap window's few changing fields are stored back after
// the loop (an encoder exception stops tracing, and then they no longer
// matter).
void Session::merge_events(std::uint64_t cut) {
  CursorMerge merge(cursors.data(), heap.data(), heap.size());
  ThreadBuffer* const* const by_id = threads_by_id.data();
  TraceWriter* const w = writer.get();
  SessionClock clk = clock;
  WindowCount window_count;  // the window's copy, taken under live_mutex
  bool rescanned = false;
  auto on_node = [&](const StackNode& n) {
    if (!rescanned && !modules.contains(n.ip)) {
      rescanned = true;
      modules.rescan([&](const ModuleInfo& m) { w->add_module(m); });
    }
    w->add_stack_node(n);
  };
  bool live_on = track_live.load(std::memory_order_acquire);
  std::uint32_t heap_pool_id = live_on ? memtrail::heap_pool() : 0;
  std::unique_lock live_lock(live_mutex, std::defer_lock);
  if (live_on) {
    live_lock.lock();
    window_count.win = window;
  }
  // A thread whose last event the previous round encoded: its encoder
  // state goes now, not at the pass's end (a pass may take the whole lives
  // of hundreds of short threads, each state ~50 KiB).
  std::uint32_t ended = 0;
  while (merge.pending() != 0) {
    if (ended != 0) {
      w->end_thread(ended);
      ended = 0;
    }
    std::size_t top = merge.top();
    DrainCursor& c = merge.at(top);
    const std::uint32_t thread = c.thread;
    const std::uint64_t* record = c.event;
    const RawHead raw = read_raw_head(record);
    const std::size_t fixed_words = raw_fixed_words(raw);
    // The cursor moves on first: its next event's time decides the order,
    // and the lines after it are on their way while this one is encoded.
    c.pos += static_cast<std::uint32_t>((fixed_words + raw.frames) * 8);
    __builtin_prefetch(reinterpret_cast<const char*>(record) + 256);
    const bool has_next = cursor_next(c, cut);
    if (!has_next && thread_drained(c)) ended = thread;
    merge.moved(top, has_next);
    const std::uint64_t* frames = record + fixed_words;
    if (raw.kind == kRawRename) {
      char name[kMaxNameBytes];
      std::memcpy(name, frames, sizeof name);
      name[kMaxNameBytes - 1] = '\0';
      w->add_thread(ThreadInfo{thread, thread_tids[thread], name});
      continue;
    }
    std::uint32_t explicit_stack;
    Event e = event_of(raw, record, thread, clk, explicit_stack);
    if (raw.frames) {
      e.stack = trie.intern(frames, raw.frames, on_node);
      if (raw.stack_slot) by_id[thread]->tables->slot_stack[raw.stack_slot - 1] = e.stack;
    } else if (raw.stack_slot) {
      e.stack = by_id[thread]->tables->slot_stack[raw.stack_slot - 1];
    } else {
      e.stack = explicit_stack;
    }
    if (!live_on || e.pool != heap_pool_id || !add_heap_event(e, live, window_count, w))
      w->add_event(e);
    // Once added: a chunk that closed in the add did not hold it (the
    // tally's count of written events, TraceWriter::on_chunk_written).
    ++events_drained;
  }
  if (ended != 0) w->end_thread(ended);
  heap.resize(merge.pending());
  clock.last_ns = clk.last_ns;
  if (live_on) window = window_count.win;
}

// Moves each thread's read position past what the pass read; a thread that
// can no longer write gives its last block back. Blocks go back only now,
// after their events were encoded: while the drain is behind, program
// threads then hit the backlog bound in next_block() and drain or wait,
// instead of the backlog growing.
void Session::give_back_blocks() {
  bool retired_some = false;
  const std::uint64_t writing = live_threads.load(std::memory_order_relaxed);
  for (DrainCursor& c : cursors) {
    ThreadBuffer* tb = c.tb;
    if (tb->read_block != c.block) tb->released_pos = 0;
    tb->read_block = c.block;
    tb->read_pos = c.pos;
    tb->released_pos = BlockPool::release_read(c.block, tb->released_pos, c.pos, writing);
    if (thread_drained(c)) {
      consumed.push_back(c.block);
      tb->retired = true;
      unmap_thread_tables(tb->tables);  // nothing reads them from here on
      tb->tables = nullptr;
      tb->stack_cache = nullptr;
      writer->end_thread(tb->id);  // its encoder state for this chunk, too
      retired_some = true;
    }
  }
  if (retired_some) unlink_retired();
  for (Block* b : consumed) blocks.put(b);
  blocks.trim(writing, SessionClock::monotonic_ns());
  if (!consumed.empty()) {
    blocks_given_back.fetch_add(1);
    if (block_waiters.load() != 0)
      ::syscall(SYS_futex, &blocks_given_back, FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0);
  }
  consumed.clear();
}

// Retired threads leave the registry: each pass walks it several times
// (pass_cut, open_cursors, emit_tables, count_busy_producers), and a
// program that started 10,000 threads made every pass walk all of them
// (~15 % of the tracer's time under many_threads churn). Only drains
// unlink, one at a time, and never the head (program threads push before
// it with a CAS on `registry`). An unlinked entry keeps its memory and its
// `next`, so a walk standing on it (thread_registry() from any thread)
// still goes on to the list's end.
void Session::unlink_retired() {
  ThreadBuffer* prev = registry.load(std::memory_order_acquire);
  if (prev == nullptr) return;
  for (ThreadBuffer* tb = prev->next.load(std::memory_order_acquire); tb;
       tb = tb->next.load(std::memory_order_acquire)) {
    if (tb->retired)
      prev->next.store(tb->next.load(std::memory_order_relaxed), std::memory_order_release);
    else
      prev = tb;
  }
}

bool Session::drain() {
  take_inherited_blocks();  // before any event of this trace
  const bool exiting = exit_requested.load(std::memory_order_acquire);
  // The same threads in every stage (the list only grows at its head; a
  // thread registered later stamps all its events after the cut).
  ThreadBuffer* const threads = registry.load(std::memory_order_acquire);
  bool more = false;  // a thread's intake was capped: drain again at once
  std::uint64_t cut = pass_cut(threads, exiting, more);
  clock.calibrate();
  last_cut = exiting ? clock.raw_now() : cut;
  open_cursors(threads, exiting, cut);
  emit_tables();  // everything registered before these events were published
  if (modules_dirty.exchange(false, std::memory_order_acq_rel))
    modules.rescan([&](const ModuleInfo& m) { writer->add_module(m); });
  merge_events(cut);
  give_back_blocks();
  return more;
}

}  // namespace memtrail::runtime
