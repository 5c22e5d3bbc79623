#include "pipelined_read.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <variant>
#include <vector>

namespace memtrail::detail {

namespace {

struct StringRecord {
  std::uint32_t id;
  std::string text;
};
struct ChunkStart {
  std::uint64_t offset;
};
// Stack nodes are most of the records (one per new frame of a call path:
// ~2·10^6 for 10^5 distinct stacks) and arrive in runs between events, so a
// batch may hold many: they are stored inline, and the rare, larger records
// behind a pointer, which keeps a record at 24 bytes instead of 144
// (docs/BENCHMARKS.md, GUI memory with distinct stacks).
using Record =
    std::variant<StackNode, ChunkStart, std::unique_ptr<TraceHeader>, std::unique_ptr<StringRecord>,
                 std::unique_ptr<ModuleInfo>, std::unique_ptr<ThreadInfo>,
                 std::unique_ptr<PoolInfo>, std::unique_ptr<ScopeInfo>>;
static_assert(sizeof(Record) <= 24);

// `events` keeps kBatchEvents slots for the batch's whole life (recycled
// with it); `count` of them are filled. The producer stores into a slot
// instead of push_back's capacity check and size update.
struct Batch {
  std::vector<Event> events;
  std::size_t count = 0;
  std::vector<std::pair<std::size_t, Record>> records;  // (events before it, record)
  bool last = false;
};

// ~224 KiB: stays in a 512 KiB L2 between the threads, and halves the
// wake-ups (futex, scheduler) that 2048 cost.
constexpr std::size_t kBatchEvents = 4096;
constexpr std::size_t kMaxQueued = 4;

class Queue {
 public:
  void push(Batch b) {
    std::unique_lock lock(mu_);
    not_full_.wait(lock, [&] { return q_.size() < kMaxQueued || abandoned_; });
    if (abandoned_) return;
    q_.push_back(std::move(b));
    not_empty_.notify_one();
  }
  // The next batch, or false when `other_work` became true first.
  template <class OtherWork>
  bool pop(Batch& b, OtherWork&& other_work) {
    std::unique_lock lock(mu_);
    not_empty_.wait(lock, [&] { return !q_.empty() || other_work(); });
    if (q_.empty()) return false;
    b = std::move(q_.front());
    q_.pop_front();
    not_full_.notify_one();
    return true;
  }
  // Wakes a pop() waiting for its other work.
  void wake() {
    std::lock_guard lock(mu_);
    not_empty_.notify_all();
  }
  // Consumed batches go back to the producer with their capacity, so no
  // batch is allocated (and its pages faulted in) after the first few.
  void recycle(Batch b) {
    b.count = 0;
    b.records.clear();
    b.last = false;
    std::lock_guard lock(mu_);
    if (spare_.size() < kMaxQueued + 2) spare_.push_back(std::move(b));
  }
  Batch fresh() {
    {
      std::lock_guard lock(mu_);
      if (!spare_.empty()) {
        Batch b = std::move(spare_.back());
        spare_.pop_back();
        return b;
      }
    }
    Batch b;
    b.events.resize(kBatchEvents);
    return b;
  }
  // The consumer stopped: drop what is queued and never block the producer.
  void abandon() {
    std::lock_guard lock(mu_);
    abandoned_ = true;
    q_.clear();
    not_full_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable not_empty_, not_full_;
  std::deque<Batch> q_;
  std::vector<Batch> spare_;
  bool abandoned_ = false;
};

class Producer : public TraceVisitor {
 public:
  Producer(Queue& q, std::atomic<bool>& stop) : q_(q), stop_(stop), batch_(q.fresh()) {}
  void on_header(const TraceHeader& h) override { add(std::make_unique<TraceHeader>(h)); }
  void on_string(std::uint32_t id, std::string_view text) override {
    add(std::make_unique<StringRecord>(StringRecord{id, std::string(text)}));
  }
  void on_module(const ModuleInfo& m) override { add(std::make_unique<ModuleInfo>(m)); }
  void on_thread(const ThreadInfo& t) override { add(std::make_unique<ThreadInfo>(t)); }
  void on_pool(const PoolInfo& p) override { add(std::make_unique<PoolInfo>(p)); }
  void on_stack_node(const StackNode& n) override { add(n); }
  void on_scope(const ScopeInfo& s) override { add(std::make_unique<ScopeInfo>(s)); }
  void on_chunk(std::uint64_t offset) override { add(ChunkStart{offset}); }
  // The reader stores events straight into the batch's free slots.
  std::span<Event> event_buffer() override {
    return {batch_.events.data() + batch_.count, kBatchEvents - batch_.count};
  }
  void events_stored(std::size_t n) override {
    batch_.count += n;
    if (batch_.count == kBatchEvents) send();
  }
  void on_event(const Event& e) override {
    batch_.events[batch_.count++] = e;
    if (batch_.count == kBatchEvents) send();
  }
  bool keep_going() override { return !stop_.load(std::memory_order_relaxed); }
  void finish() {
    batch_.last = true;
    q_.push(std::move(batch_));
  }

 private:
  void add(Record r) { batch_.records.emplace_back(batch_.count, std::move(r)); }
  void send() {
    q_.push(std::move(batch_));
    batch_ = q_.fresh();
  }
  Queue& q_;
  std::atomic<bool>& stop_;
  Batch batch_;
};

void replay_record(TraceVisitor& v, const Record& r) {
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, StackNode>)
          v.on_stack_node(x);
        else if constexpr (std::is_same_v<T, ChunkStart>)
          v.on_chunk(x.offset);
        else if constexpr (std::is_same_v<T, std::unique_ptr<TraceHeader>>)
          v.on_header(*x);
        else if constexpr (std::is_same_v<T, std::unique_ptr<StringRecord>>)
          v.on_string(x->id, x->text);
        else if constexpr (std::is_same_v<T, std::unique_ptr<ModuleInfo>>)
          v.on_module(*x);
        else if constexpr (std::is_same_v<T, std::unique_ptr<ThreadInfo>>)
          v.on_thread(*x);
        else if constexpr (std::is_same_v<T, std::unique_ptr<PoolInfo>>)
          v.on_pool(*x);
        else
          v.on_scope(*x);
      },
      r);
}

}  // namespace

ReadResult read_pipelined(TraceReader& reader, TraceVisitor& visitor,
                          const std::function<bool(std::uint64_t)>& bytes_read) {
  Queue queue;
  std::atomic<bool> stop{false};
  ReadResult result;
  // Who reads and decompresses the chunks ahead of the decoder. With bytes
  // to report, this thread (ChunkFeed, between batches), which reports each
  // chunk it reads. Without, a third thread, the reader's (read_ahead): the
  // analysis is now the slower stage on every trace, and zstd was a sixth
  // of its thread's cpu (docs/BENCHMARKS.md, "Floor: report speed"); in
  // round 6, when the decoder was the slower stage, that thread shared its
  // core and this one took the work.
  ChunkFeed feed;
  feed.on_slot_freed([&] { queue.wake(); });
  std::thread producer_thread([&] {
    Producer p(queue, stop);
    result = bytes_read ? reader.read_fed(p, feed) : reader.read_ahead(p);
    p.finish();
  });
  struct Joiner {  // also when the visitor throws
    std::thread& t;
    std::atomic<bool>& stop;
    ChunkFeed& feed;
    Queue& queue;
    ~Joiner() {
      if (!t.joinable()) return;
      // The decoder stops at its next batch (read_ahead() has no feed to
      // stop it); queued batches are dropped.
      stop = true;
      feed.stop();
      queue.abandon();
      t.join();
    }
  } joiner{producer_thread, stop, feed, queue};
  auto halt = [&] {
    stop = true;
    feed.stop();
    queue.abandon();
  };
  for (;;) {
    bool go_on = true;
    while (go_on && feed.fill())
      if (bytes_read) go_on = bytes_read(feed.bytes_read());
    if (!go_on) {
      halt();
      break;
    }
    Batch b;
    if (!queue.pop(b, [&] { return feed.fillable(); })) continue;
    // The events between two records go to the visitor in one call.
    std::size_t i = 0;
    for (const auto& [before, record] : b.records) {
      if (before > i) visitor.on_events(b.events.data() + i, before - i);
      i = std::max(i, before);
      replay_record(visitor, record);
    }
    if (b.count > i) visitor.on_events(b.events.data() + i, b.count - i);
    if (b.last) break;
    queue.recycle(std::move(b));
    if (!visitor.keep_going()) {
      halt();
      break;
    }
  }
  producer_thread.join();
  return result;
}

}  // namespace memtrail::detail
