// CachingPool: a line-by-line port of the decision logic of c10's
// DeviceCachingAllocator (CUDACachingAllocator.cpp @001074d2), minus CUDA
// graphs and IPC. Function names follow the original so the two can be read
// side by side: get_free_block, alloc_block, alloc_found_block, free_block,
// try_merge_blocks, release_available_cached_blocks, release_cached_blocks,
// garbage_collect_cached_blocks, and the expandable-segment helpers. The
// data structures differ (docs/allocators.md, "How the pools keep the rules
// fast"); the decisions and every stat are the same.
#include "memtrail/alloc/caching_pool.hpp"

#include <algorithm>
#include <cassert>
#include <deque>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>
#include <vector>

#include "addr_map.hpp"
#include "best_fit_bins.hpp"
#include "memtrail/alloc/device_api.hpp"
#include "memtrail/alloc/errors.hpp"
#include "memtrail/recorder.hpp"
#include "node_cache.hpp"
#include "pmr_forwarders.hpp"
#include "spin_lock.hpp"

namespace memtrail::alloc {
namespace {

struct Block;
struct BlockAccess;
struct BlockPool;
struct ExpandableSegment;
// A pool's free blocks of one stream, in best-fit order.
using FreeBins = detail::BestFitBins<Block*, BlockAccess>;

// One contiguous range of a segment: allocated, cached, or (expandable
// segments only) unmapped address space.
struct Block {
  std::uint64_t addr = 0;
  std::uint64_t size = 0;
  std::uint64_t requested = 0;
  StreamId stream = 0;
  BlockPool* pool = nullptr;
  Block* prev = nullptr;
  Block* next = nullptr;
  ExpandableSegment* expandable = nullptr;
  std::uint64_t segment = 0;  // base address of the segment (whole segments)
  std::uint64_t gc_count_base = 0;
  int event_count = 0;
  bool allocated = false;
  bool mapped = true;
  std::uint32_t bin_pos = 0;          // owned by `bins`
  FreeBins* bins = nullptr;           // the free-block index holding it, if any
  std::vector<StreamId> stream_uses;  // sorted, unique

  bool is_split() const { return prev != nullptr || next != nullptr; }
  void reset() {
    requested = 0;
    prev = next = nullptr;
    expandable = nullptr;
    segment = gc_count_base = 0;
    event_count = 0;
    allocated = false;
    mapped = true;
    bin_pos = 0;
    bins = nullptr;
    stream_uses.clear();
  }
};

struct BlockAccess {
  static std::uint64_t size(const Block* b) { return b->size; }
  static std::uint64_t addr(const Block* b) { return b->addr; }
  static std::uint32_t& pos(Block* b) { return b->bin_pos; }
};

// (stream, address): unmapped ranges of expandable segments.
struct ByAddress {
  bool operator()(const Block* a, const Block* b) const {
    if (a->stream != b->stream) return a->stream < b->stream;
    return a->addr < b->addr;
  }
};

// Free blocks in c10's (stream, size, address) order: per stream (streams
// sorted), a FreeBins. Small-pool sizes are multiples of 512 up to the 2 MiB
// segment and get exact size classes; large-pool blocks, and every block of
// an expandable-segments pool (whose best fit walks successors), sit in the
// bins' ordered set. The set nodes are recycled: a cached malloc/free pair
// costs no call into the system allocator.
struct BlockPool {
  BlockPool(detail::NodeCache* nodes, bool small, bool expandable)
      : unmapped(ByAddress{}, detail::NodeAllocator<Block*>(nodes)),
        is_small(small),
        ordered_walks(expandable),
        classes(small && !expandable ? CachingPool::kSmallBuffer / CachingPool::kMinBlockSize : 0),
        nodes_(nodes) {}
  std::vector<std::pair<StreamId, std::unique_ptr<FreeBins>>> streams;  // sorted by stream
  std::set<Block*, ByAddress, detail::NodeAllocator<Block*>> unmapped;
  bool is_small = false;
  bool ordered_walks = false;  // expandable segments: best fit walks the set
  std::uint32_t classes = 0;
  // The first stream given bins, checked before the list (usually the only one).
  StreamId first_stream = 0;
  FreeBins* first_bins = nullptr;
  std::uint64_t get_free_blocks_call_count = 0;

  [[gnu::always_inline]] FreeBins* bins(StreamId stream) const {
    if (stream == first_stream && first_bins) [[likely]]
      return first_bins;
    for (auto& [s, b] : streams)
      if (s == stream) return b.get();
    return nullptr;
  }
  [[gnu::always_inline]] FreeBins& bins_or_create(StreamId stream) {
    if (FreeBins* b = bins(stream)) [[likely]]
      return *b;
    return add_stream(stream);
  }
  [[gnu::noinline]] FreeBins& add_stream(StreamId stream) {
    auto pos = std::lower_bound(streams.begin(), streams.end(), stream,
                                [](const auto& e, StreamId s) { return e.first < s; });
    pos = streams.emplace(pos, stream,
                          std::make_unique<FreeBins>(BlockAccess{}, CachingPool::kMinBlockSize,
                                                     classes, nodes_, !ordered_walks));
    if (!first_bins) {
      first_stream = stream;
      first_bins = pos->second.get();
    }
    return *pos->second;
  }
  [[gnu::always_inline]] void insert_into_blocks(Block* b) {
    b->gc_count_base = get_free_blocks_call_count;
    FreeBins& bins = bins_or_create(b->stream);
    bins.insert(b);
    b->bins = &bins;
  }
  // b is the block in its bins' pending slot: resizing it in place leaves
  // the bins exactly as erase + insert_into_blocks would.
  [[gnu::always_inline]] static bool is_pending(const Block* b) {
    return b->bins && b->bins->is_pending(const_cast<Block*>(b));
  }
  [[gnu::always_inline]] void erase(Block* b) {  // no-op when b is not a cached free block
    if (!b->bins) return;
    b->bins->erase(b);
    b->bins = nullptr;
  }
  // Every cached free block in (stream, size, address) order.
  void append_sorted(std::vector<Block*>& out) const {
    for (auto& [s, b] : streams) b->append_sorted(out);
  }
  std::uint64_t gc_count(const Block* b) const {
    return get_free_blocks_call_count - b->gc_count_base;
  }

 private:
  detail::NodeCache* nodes_;
};

// A reserved address range whose pages (2 MiB small / 20 MiB large) are
// mapped on demand, like c10's ExpandableSegment over cuMemMap.
struct ExpandableSegment {
  std::uint64_t base = 0;
  std::uint64_t size = 0;
  std::uint64_t page = 0;
  StreamId stream = 0;
  std::vector<bool> mapped;  // per page
};

struct AllocParams {
  std::uint64_t size = 0;        // rounded
  std::uint64_t alloc_size = 0;  // segment size
  StreamId stream = 0;
  BlockPool* pool = nullptr;
  Block* block = nullptr;
  bool from_cache = false;
  UpstreamFailure failure;
};

std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) {
  return (a + b - 1) / b;
}

}  // namespace

struct CachingPool::Impl {
  CachingPool& self;
  Upstream& upstream;
  CachingConfig config;
  mutable detail::RecursiveSpinLock mutex;
  detail::NodeCache nodes;
  BlockPool large{&nodes, false, config.expandable_segments};
  BlockPool small{&nodes, true, config.expandable_segments};
  detail::AddrMap<Block*> allocated_blocks;  // address -> block handed out
  DeviceStats stats;
  std::uint64_t total_allocated_memory = 0;
  bool set_fraction = false;
  std::uint64_t allowed_memory_maximum = 0;
  std::vector<std::function<bool()>> free_callbacks;
  std::vector<OomObserver> oom_observers;
  std::vector<ExpandableSegment*> expandable_segments;
  // CUDA events: per stream, in record order. Each is complete once
  // synchronize_stream() has passed its sequence number or, over a CUDA
  // upstream, once the real event recorded on the stream has (PyTorch's
  // cudaEventQuery at the next malloc).
  struct StreamEvent {
    std::uint64_t seq;
    Block* block;
    std::uint64_t device_event;  // 0: abstract only
  };
  std::map<StreamId, std::deque<StreamEvent>> cuda_events;
  std::map<StreamId, std::uint64_t> recorded, completed;
  DeviceApi* device_api = upstream.device_api();  // null: events are abstract
  Block* spare = nullptr;                         // recycled Block objects, chained through `next`
  bool any_divisions = false;  // roundup_power2_divisions set: round_size asks the config
  // No option that changes a cache hit or a free is in use: no expandable
  // segments, no rounding divisions, no max_split_size, no garbage
  // collection, active stats mirrored (see update_plain).
  bool plain = false;
  // The pending undo (see "Pending undo" below): the block the last
  // operation handed out, when its free may be deferred, and the block
  // whose free is deferred. At most one is set.
  Block* undo_split = nullptr;
  Block* undo_freed = nullptr;
  // How much inactive_split (blocks, bytes) moved, either way, at the
  // malloc that produced undo_split / undo_freed.
  std::int64_t undo_inactive_blocks = 0, undo_inactive_bytes = 0;
  // Free + malloc pairs of that block whose counters are not applied yet
  // (apply_pairs).
  std::int64_t undo_pairs = 0;

  Impl(CachingPool& s, Upstream& up, CachingConfig c)
      : self(s), upstream(up), config(std::move(c)) {
    large.is_small = false;
    small.is_small = true;
    stats.max_split_size = static_cast<std::int64_t>(config.max_split_size);
    for (std::uint64_t d : config.roundup_power2_divisions) any_divisions |= d > 1;
    update_plain();
  }

  void update_plain() {
    plain = !config.expandable_segments && !any_divisions && config.max_split_size == UINT64_MAX &&
            !(set_fraction && config.garbage_collection_threshold > 0.0) &&
            active_mirrors_allocation;
  }
  static std::uint64_t round_plain(std::uint64_t size) {  // round_size without divisions
    return size < kMinBlockSize ? kMinBlockSize : kMinBlockSize * ceil_div(size, kMinBlockSize);
  }

  ~Impl() {
    flush();
    for (auto& [s, q] : cuda_events)
      for (auto& e : q)
        if (e.device_event) device_api->destroy_event(e.device_event);
    // Give every segment back; blocks still handed out are lost with it.
    std::vector<Block*> all;
    collect_blocks(all);
    std::map<std::uint64_t, std::uint64_t> sizes;
    for (Block* b : all)
      if (!b->expandable) sizes[b->segment] += b->size;
    for (auto& [base, size] : sizes) {
      upstream.release_segment(reinterpret_cast<void*>(base), size, kMinBlockSize);
      record_segment(EventKind::segment_release, self.pool_id(), base, size);
    }
    for (ExpandableSegment* es : expandable_segments) {
      for (std::size_t i = 0; i < es->mapped.size(); ++i)
        if (es->mapped[i])
          upstream.unmap_pages(reinterpret_cast<void*>(es->base + i * es->page), es->page);
      upstream.release_address_space(reinterpret_cast<void*>(es->base), es->size);
      delete es;
    }
    std::set<Block*> unique(all.begin(), all.end());
    for (Block* b : unique) delete b;
    while (Block* b = spare) {
      spare = b->next;
      delete b;
    }
  }

  // Every block object, once (allocated, cached, unmapped, awaiting events).
  void collect_blocks(std::vector<Block*>& out) const {
    allocated_blocks.for_each([&](std::uint64_t, Block* b) { out.push_back(b); });
    for (const BlockPool* p : {&large, &small}) {
      p->append_sorted(out);
      out.insert(out.end(), p->unmapped.begin(), p->unmapped.end());
    }
    std::set<Block*> waiting;
    for (auto& [s, q] : cuda_events)
      for (auto& e : q)
        if (!e.block->allocated) waiting.insert(e.block);
    out.insert(out.end(), waiting.begin(), waiting.end());
  }

  Block* new_block(std::uint64_t addr, std::uint64_t size, StreamId stream, BlockPool* pool) {
    Block* b;
    if (spare) {
      b = spare;
      spare = b->next;
      b->reset();  // field by field: stream_uses keeps its capacity
    } else {
      b = new Block;
    }
    b->addr = addr;
    b->size = size;
    b->stream = stream;
    b->pool = pool;
    return b;
  }
  // new_block for the plain split, which sets prev, next, segment,
  // requested and allocated itself: a recycled Block is already free of
  // bins, events and stream uses (every caller of delete_block passes one
  // in that state), so only what may differ is written.
  [[gnu::always_inline]] Block* new_plain_block(std::uint64_t addr, std::uint64_t size,
                                                StreamId stream, BlockPool* pool) {
    Block* b = spare;
    if (!b) [[unlikely]]
      return new_block(addr, size, stream, pool);
    spare = b->next;
    assert(!b->bins && b->event_count == 0 && b->stream_uses.empty() && !b->allocated);
    b->addr = addr;
    b->size = size;
    b->stream = stream;
    b->pool = pool;
    b->expandable = nullptr;
    b->mapped = true;
    return b;
  }
  // b: out of every index, with no events or stream uses.
  void delete_block(Block* b) {
    b->next = spare;
    spare = b;
  }

  // Stats are kept per pool (small, large) as in c10, each pool's nine
  // counters in one struct so that an operation addresses one of them from
  // one base. The "all" entry of each counter is the pools' sum, so only its
  // peak is tracked here (at every increase, from the two pools' currents:
  // the same moments and values as c10's own update of "all");
  // device_stats() fills in the rest. A free then touches one Stat per
  // counter instead of two. `type` below is a pool's index in `counters`.
  enum Counter : int {
    kAllocation,
    kSegment,
    kActive,
    kInactiveSplit,
    kAllocatedBytes,
    kReservedBytes,
    kActiveBytes,
    kInactiveSplitBytes,
    kRequestedBytes,
    kCounters
  };
  static constexpr StatArray DeviceStats::*kArrays[kCounters] = {
      &DeviceStats::allocation,      &DeviceStats::segment,
      &DeviceStats::active,          &DeviceStats::inactive_split,
      &DeviceStats::allocated_bytes, &DeviceStats::reserved_bytes,
      &DeviceStats::active_bytes,    &DeviceStats::inactive_split_bytes,
      &DeviceStats::requested_bytes};
  // A Stat whose `allocated` is derived: allocated - freed moves with
  // current, so allocated = current + freed - (current when the
  // accumulated stats were last reset). An increase then writes two fields.
  struct HotStat {
    std::int64_t current = 0, peak = 0, freed = 0, base = 0;
    [[gnu::always_inline]] void increase(std::int64_t amount) {
      current += amount;
      if (current > peak) peak = current;
    }
    [[gnu::always_inline]] void decrease(std::int64_t amount) {
      current -= amount;
      freed += amount;
    }
    Stat stat() const { return {current, peak, current + freed - base, freed}; }
    void reset_peak() { peak = current; }
    void reset_accumulated() {
      freed = 0;
      base = current;
    }
  };
  struct PoolCounters {
    HotStat c[kCounters];
  };
  static constexpr int kLargeIndex = 0, kSmallIndex = 1;
  PoolCounters counters[2];            // [kLargeIndex], [kSmallIndex]
  std::int64_t all_peak[kCounters]{};  // peak of the pools' sum

  [[gnu::always_inline]] void up(Counter k, int type, std::int64_t amount) {
    HotStat& mine = counters[type].c[k];
    mine.increase(amount);
    const std::int64_t all = mine.current + counters[1 - type].c[k].current;
    if (all > all_peak[k]) all_peak[k] = all;
  }
  [[gnu::always_inline]] void down(Counter k, int type, std::int64_t amount) {
    counters[type].c[k].decrease(amount);
  }
  static int pool_type(const BlockPool& pool) { return pool.is_small ? kSmallIndex : kLargeIndex; }
  std::int64_t current_sum(Counter k) const {
    return counters[kSmallIndex].c[k].current + counters[kLargeIndex].c[k].current;
  }

  // Until a free is first deferred by stream events, every block leaves
  // `allocation` and `active` (and their byte counts) at the same moment by
  // the same amount, so the four Stats of each are equal and only
  // allocation / allocated_bytes are kept; the first deferral copies them
  // into active / active_bytes and both are kept from then on.
  bool active_mirrors_allocation = true;
  void stop_mirroring() {
    if (!active_mirrors_allocation) return;
    for (PoolCounters& pc : counters) {
      pc.c[kActive] = pc.c[kAllocation];
      pc.c[kActiveBytes] = pc.c[kAllocatedBytes];
    }
    all_peak[kActive] = all_peak[kAllocation];
    all_peak[kActiveBytes] = all_peak[kAllocatedBytes];
    active_mirrors_allocation = false;
    update_plain();
  }

  DeviceStats device_stats() const {
    DeviceStats out = stats;  // the scalar counters and the oversize Stats
    for (int k = 0; k < kCounters; ++k) {
      int from = k;
      if (active_mirrors_allocation && k == kActive) from = kAllocation;
      if (active_mirrors_allocation && k == kActiveBytes) from = kAllocatedBytes;
      StatArray& a = out.*kArrays[k];
      const Stat small = counters[kSmallIndex].c[from].stat();
      const Stat large = counters[kLargeIndex].c[from].stat();
      a[kSmallPool] = small;
      a[kLargePool] = large;
      a[kAggregate].current = small.current + large.current;
      a[kAggregate].peak = all_peak[from];
      a[kAggregate].allocated = small.allocated + large.allocated;
      a[kAggregate].freed = small.freed + large.freed;
    }
    return out;
  }

  void reset_peaks() {
    stats.reset_peak();
    for (PoolCounters& pc : counters)
      for (HotStat& st : pc.c) st.reset_peak();
    for (int k = 0; k < kCounters; ++k) all_peak[k] = current_sum(static_cast<Counter>(k));
  }
  void reset_accumulated() {
    stats.reset_accumulated();
    for (PoolCounters& pc : counters)
      for (HotStat& st : pc.c) st.reset_accumulated();
  }

  // --- sizes ---

  std::uint64_t round_size(std::uint64_t size) const {
    if (size < kMinBlockSize) return kMinBlockSize;
    if (!any_divisions) return kMinBlockSize * ceil_div(size, kMinBlockSize);
    const std::uint64_t divisions = config.divisions_for(size);
    if (divisions > 1 && size > kMinBlockSize * divisions)
      return roundup_power2_next_division(size, divisions);
    return kMinBlockSize * ceil_div(size, kMinBlockSize);
  }

  static std::uint64_t roundup_power2_next_division(std::uint64_t size, std::uint64_t divisions) {
    if ((size & (size - 1)) == 0) return size;
    const std::uint64_t power2_floor = std::bit_floor(size);
    const std::uint64_t division = power2_floor >> (std::bit_width(divisions) - 1);
    if (division == 0) return power2_floor << 1;
    const std::uint64_t floor = size & ~(division - 1);
    return floor == size ? size : floor + division;
  }

  BlockPool& get_pool(std::uint64_t size) { return size <= kSmallSize ? small : large; }

  bool should_split(const Block* block, std::uint64_t size) const {
    const std::uint64_t remaining = block->size - size;
    if (block->pool->is_small || config.expandable_segments) return remaining >= kMinBlockSize;
    return size < config.max_split_size && remaining > kSmallSize;
  }

  // --- malloc ---

  // The cache-hit path is inline and allocates nothing; everything after a
  // miss (callbacks, GC, new segments, retries, OOM) is out of line.
  //
  // The lock is skipped while the process has one thread and no trace is
  // recorded: no other thread can then enter the pool, and the cache-hit
  // and free paths call nothing (no upstream, no callback, no recorder)
  // that could start one. A miss takes the lock before anything that could
  // (free-memory callbacks, the upstream, observers). The locked path is
  // the same code.
  static bool alone() { return MEMTRAIL_SINGLE_THREADED() && !tracing(); }

  // A cache hit in a `plain` pool, alone() and with no stream events
  // pending, runs a copy of the code specialised for that case and for the
  // pool (small / large): every option test folds away and the stats are
  // at fixed offsets. Anything else (a miss, a deferred free) starts over
  // on the general path, which is exact because the plain path only looked.
  // `untraced`: the caller saw no trace being recorded (then, if the
  // process has one thread, none can start during the call).
  void* malloc(std::uint64_t orig_size, StreamId stream, bool untraced) {
    // One compare for both rare cases: 0, and a size whose rounding would
    // wrap around (PyTorch never sees one: its sizes are int64).
    if (orig_size - 1 >= kMaxRequestBytes) [[unlikely]] {
      if (orig_size == 0) return nullptr;
      refuse_oversize(orig_size);
    }
    // (plain implies no stream events: the first deferred free ends it.)
    if (untraced && MEMTRAIL_SINGLE_THREADED() && plain) [[likely]] {
      const std::uint64_t size = round_plain(orig_size);
      // (The public malloc tried redo() already.) The deferred free, inline:
      // this frame is already set up for the split below.
      if (undo_freed || undo_pairs) [[unlikely]]
        flush_deferred();
      undo_split = nullptr;
      if (size <= kSmallSize) {
        if (void* p = malloc_plain<kSmallIndex>(orig_size, size, stream)) [[likely]]
          return p;
      } else if (void* p = malloc_plain<kLargeIndex>(orig_size, size, stream)) [[likely]] {
        return p;
      }
    }
    return malloc_general(orig_size, stream);
  }

  [[noreturn, gnu::noinline]] void refuse_oversize(std::uint64_t orig_size) const {
    throw OutOfMemoryError("'" + self.name() + "': cannot allocate " + std::to_string(orig_size) +
                           " bytes: more than the largest request a pool serves (" +
                           std::to_string(kMaxRequestBytes) + " bytes)");
  }

  // nullptr: no cached block fits (nothing was changed). kRecord: under the
  // lock, where a trace may be recorded.
  template <int kType, bool kRecord = false>
  [[gnu::always_inline]] void* malloc_plain(std::uint64_t orig_size, std::uint64_t size,
                                            StreamId stream) {
    BlockPool& pool = kType == kSmallIndex ? small : large;
    // get_free_block without the options, keeping what the bins know.
    FreeBins* bins = pool.bins(stream);
    if (!bins) [[unlikely]]
      return nullptr;
    bool pending = false;
    Block* block = bins->first_at_least(size, nullptr, &pending);
    if (!block) [[unlikely]]
      return nullptr;
    block = alloc_found_block<kType>(pool, block, size, stream, orig_size, pending);
    void* ptr = reinterpret_cast<void*>(block->addr);
    if (kRecord) record_reuse(self.pool_id(), ptr, block->size, orig_size);
    return ptr;
  }

  // With other threads or a trace: the plain path under the lock (`plain`
  // read there), else the general one.
  [[gnu::noinline]] void* malloc_general(std::uint64_t orig_size, StreamId stream) {
    if (alone()) {
      flush();
      return malloc_body(orig_size, stream, nullptr);
    }
    std::unique_lock<detail::RecursiveSpinLock> lock(mutex);
    if (plain) {
      const std::uint64_t size = round_plain(orig_size);
      if (Block* x = undo_freed; x && x->size == size && x->stream == stream)
        return redo<true>(x, orig_size);
      flush();
      void* p = size <= kSmallSize ? malloc_plain<kSmallIndex, true>(orig_size, size, stream)
                                   : malloc_plain<kLargeIndex, true>(orig_size, size, stream);
      if (p) [[likely]]
        return p;
    }
    flush();
    return malloc_body(orig_size, stream, &lock);
  }

  // `held`: the pool's lock, or nullptr when alone().
  [[gnu::always_inline]] void* malloc_body(std::uint64_t orig_size, StreamId stream,
                                           std::unique_lock<detail::RecursiveSpinLock>* held) {
    if (!cuda_events.empty()) [[unlikely]]
      process_events();
    const std::uint64_t size = round_size(orig_size);
    BlockPool& pool = get_pool(size);
    Block* block = get_free_block(pool, size, stream);
    if (!block) [[unlikely]] {
      if (held) return malloc_miss(orig_size, size, pool, stream, *held);
      std::unique_lock<detail::RecursiveSpinLock> lock(mutex);
      return malloc_miss(orig_size, size, pool, stream, lock);
    }
    block = alloc_found_block(pool, block, size, stream, orig_size);
    void* ptr = reinterpret_cast<void*>(block->addr);
    record_reuse(self.pool_id(), ptr, block->size, orig_size);
    return ptr;
  }

  [[gnu::noinline]] void* malloc_miss(std::uint64_t orig_size, std::uint64_t size, BlockPool& pool,
                                      StreamId stream,
                                      std::unique_lock<detail::RecursiveSpinLock>& lock) {
    AllocParams p;
    p.size = size;
    p.pool = &pool;
    p.alloc_size = allocation_size(p.size);
    p.stream = stream;
    bool found = false;
    if (trigger_free_memory_callbacks()) {
      p.block = get_free_block(pool, size, stream);
      found = p.block != nullptr;
    }
    p.from_cache = found;
    if (!found) {
      if (set_fraction && config.garbage_collection_threshold > 0.0)
        garbage_collect_cached_blocks();
      found = alloc_block(p, false) ||
              (release_available_cached_blocks(p) && alloc_block(p, false)) ||
              (release_cached_blocks() && alloc_block(p, true));
    }
    if (!found) report_oom(p, orig_size, lock);  // throws

    Block* block = alloc_found_block(pool, p.block, size, stream, orig_size);
    void* ptr = reinterpret_cast<void*>(block->addr);
    if (p.from_cache)
      record_reuse(self.pool_id(), ptr, block->size, orig_size);
    else
      record_alloc(self.pool_id(), ptr, block->size, orig_size);
    return ptr;
  }

  bool trigger_free_memory_callbacks() {
    bool freed = false;
    for (auto& cb : free_callbacks) freed |= cb();
    return freed;
  }

  // The cached block best fit picks for `size` on `stream`, left in the
  // pool's free blocks (alloc_found_block takes it out, or splits it in
  // place); nullptr when none may be used.
  // kType: kAnyType, or the pool's index on the plain path.
  static constexpr int kAnyType = -1;
  template <int kType = kAnyType>
  [[gnu::always_inline]] Block* get_free_block(BlockPool& pool, std::uint64_t size,
                                               StreamId stream) {
    constexpr bool kPlain = kType != kAnyType;
    if (!kPlain && set_fraction && config.garbage_collection_threshold > 0.0)
      ++pool.get_free_blocks_call_count;
    FreeBins* bins = pool.bins(stream);
    if (!bins) [[unlikely]]
      return nullptr;
    Block* found;
    if (kPlain || !config.expandable_segments) [[likely]] {
      // No block is expandable: the first one >= size on the stream.
      found = bins->first_at_least(size, nullptr);
      if (!found) return nullptr;
    } else {
      found = expandable_best_fit(*bins, size);
      if (!found) return nullptr;
    }
    if (kPlain) return found;  // max_split_size is unlimited
    const std::uint64_t max_split = config.max_split_size;
    if (size < max_split && found->size >= max_split) return nullptr;
    if (size >= max_split && found->size >= size + config.max_non_split_rounding) return nullptr;
    return found;  // still in the free blocks: alloc_found_block takes it out
  }

  [[gnu::noinline]] static Block* expandable_best_fit(const FreeBins& bins, std::uint64_t size) {
    const auto& blocks = bins.large();  // every block, in (size, address) order
    auto it = blocks.lower_bound(FreeBins::Key{size, 0});
    if (it == blocks.end()) return nullptr;
    // Best fit counts the unmapped space right after a block as its size.
    auto expandable_size = [](const Block* b) {
      return b->size + (b->next && !b->next->mapped ? b->next->size : 0);
    };
    auto next = std::next(it);
    while ((*it)->expandable && next != blocks.end() &&
           expandable_size(*next) < expandable_size(*it))
      it = next++;
    return *it;
  }

  bool alloc_block(AllocParams& p, bool is_retry) {
    const std::uint64_t size = p.alloc_size;
    if (is_retry) stats.num_alloc_retries += 1;
    if (set_fraction && total_allocated_memory + size > allowed_memory_maximum) {
      p.failure = {Refusal::capacity, "memory fraction exceeded"};
      return false;
    }
    if (config.expandable_segments) {
      p.block = try_allocate_expandable_block(p.stream, p.pool, p.size, &p.failure);
      return p.block != nullptr;
    }
    void* ptr = upstream.allocate_segment(size, kMinBlockSize, &p.failure);
    if (!ptr) return false;
    const auto addr = reinterpret_cast<std::uint64_t>(ptr);
    total_allocated_memory += size;
    p.block = new_block(addr, size, p.stream, p.pool);
    p.block->segment = addr;
    up(kSegment, pool_type(*p.pool), 1);
    up(kReservedBytes, pool_type(*p.pool), static_cast<std::int64_t>(size));
    if (size >= config.max_split_size) stats.oversize_segments.increase(1);
    stats.num_device_alloc++;
    record_segment(EventKind::segment_reserve, self.pool_id(), addr, size);
    return true;
  }

  // Stats are updated through locals: stores into them would otherwise make
  // the compiler reload every block field after each one.
  [[gnu::always_inline]] void add_inactive_split(int type, std::int64_t blocks,
                                                 std::int64_t bytes) {
    if (blocks > 0) up(kInactiveSplit, type, blocks);
    if (blocks < 0) down(kInactiveSplit, type, -blocks);
    if (bytes > 0) up(kInactiveSplitBytes, type, bytes);
    if (bytes < 0) down(kInactiveSplitBytes, type, -bytes);
  }
  template <int kType = kAnyType>
  [[gnu::always_inline]] Block* alloc_found_block(BlockPool& pool, Block* block, std::uint64_t size,
                                                  StreamId stream, std::uint64_t orig_size,
                                                  bool pending = false) {
    constexpr bool kPlain = kType != kAnyType;  // then `pending` tells is_pending(block)
    const bool already_split = block->is_split();
    const int type = kPlain ? kType : pool_type(pool);
    const bool split = !kPlain                ? should_split(block, size)
                       : kType == kSmallIndex ? block->size - size >= kMinBlockSize
                                              : block->size - size > kSmallSize;
    if (split) {
      Block* remaining = block;
      // c10 erases the block and inserts the remainder: when the block is
      // the bins' pending slot, the remainder simply stays there.
      const bool in_place = kPlain ? pending : BlockPool::is_pending(remaining);
      if (!in_place) pool.erase(remaining);
      block = kPlain ? new_plain_block(remaining->addr, size, stream, &pool)
                     : new_block(remaining->addr, size, stream, &pool);
      ExpandableSegment* const expandable = kPlain ? nullptr : remaining->expandable;
      block->expandable = expandable;
      block->segment = remaining->segment;
      block->prev = remaining->prev;
      if (block->prev) block->prev->next = block;
      block->next = remaining;
      remaining->prev = block;
      remaining->addr += size;
      remaining->size -= size;
      const auto remaining_size = static_cast<std::int64_t>(remaining->size);
      if (in_place) [[likely]]
        remaining->gc_count_base = pool.get_free_blocks_call_count;
      else
        pool.insert_into_blocks(remaining);
      if (already_split && !expandable)
        add_inactive_split(type, 0, -static_cast<std::int64_t>(size));
      else if (!expandable)
        add_inactive_split(type, 1, remaining_size);
      if (kPlain) {  // for redo(): what the undone free and this malloc move
        undo_inactive_blocks = already_split ? 0 : 1;
        undo_inactive_bytes = already_split ? static_cast<std::int64_t>(size) : remaining_size;
      }
    } else {
      pool.erase(block);
      if (already_split && (kPlain || !block->expandable))
        add_inactive_split(type, -1, -static_cast<std::int64_t>(block->size));
      if (kPlain) {
        undo_inactive_blocks = already_split ? 1 : 0;
        undo_inactive_bytes = already_split ? static_cast<std::int64_t>(block->size) : 0;
      }
    }
    block->allocated = true;
    block->requested = orig_size;
    const auto bytes = static_cast<std::int64_t>(block->size);
    allocated_blocks.insert(block->addr, block);
    up(kAllocation, type, 1);
    up(kAllocatedBytes, type, bytes);
    if (!kPlain && !active_mirrors_allocation) [[unlikely]] {
      up(kActive, type, 1);
      up(kActiveBytes, type, bytes);
    }
    up(kRequestedBytes, type, static_cast<std::int64_t>(orig_size));
    if (!kPlain && static_cast<std::uint64_t>(bytes) >= config.max_split_size) [[unlikely]]
      stats.oversize_allocations.increase(1);
    if (kPlain) {
      // Its free may be deferred when that free would give back exactly the
      // state before this call: the block came from the pending slot, and
      // its free will merge with nothing but the remainder. (In a plain pool
      // no two neighbours are ever both free: every free merges, and a pool
      // is plain from its construction until it stops being plain for good.)
      assert(!(block->prev && can_merge<true>(block, block->prev)));
      assert(split || !(block->next && can_merge<true>(block, block->next)));
      undo_split = pending ? block : nullptr;
    }
    return block;
  }

  [[noreturn]] void report_oom(AllocParams& p, std::uint64_t orig_size,
                               std::unique_lock<detail::RecursiveSpinLock>& lock) {
    OomReport r;
    r.alloc_size = p.alloc_size;
    r.device = std::max(0, self.device() >= 0 ? self.device() : upstream.device());
    r.total = upstream.capacity();
    r.free = upstream.free_bytes();
    r.allowed = set_fraction ? allowed_memory_maximum : 0;
    stats.num_ooms += 1;
    const DeviceStats all = device_stats();
    r.allocated = static_cast<std::uint64_t>(all.allocated_bytes[kAggregate].current);
    r.reserved = static_cast<std::uint64_t>(all.reserved_bytes[kAggregate].current);
    if (tracing()) {
      nlohmann::json state = snapshot_locked().to_json();
      state["request"] = orig_size;
      state["rounded"] = p.size;
      state["alloc_size"] = p.alloc_size;
      state["stats"] = flatten(all);
      if (!p.failure.message.empty()) state["upstream"] = p.failure.message;
      Event e;
      e.kind = EventKind::oom;
      e.pool = self.pool_id();
      e.size = orig_size;
      e.requested = p.size;
      e.aux = intern_string(state.dump());
      record(e);
    }
    auto observers = oom_observers;
    const std::uint64_t total_or_allowed = set_fraction ? allowed_memory_maximum : r.total;
    lock.unlock();
    for (auto& obs : observers) obs(r.device, r.alloc_size, total_or_allowed, r.free);
    if (p.failure.refusal == Refusal::limit)
      throw LimitError(p.failure.which, p.failure.message, p.alloc_size, p.failure.in_use,
                       p.failure.limit);
    throw OutOfMemoryError(oom_message(r));
  }

  // --- free ---

  // Plain path as in malloc: a free without stream uses in a plain pool.
  void free(void* ptr, bool untraced) {
    if (!ptr) return;
    if (untraced && MEMTRAIL_SINGLE_THREADED() && plain) [[likely]] {
      flush();  // (the public free tried try_defer() already)
      if (Block** slot = allocated_blocks.find(reinterpret_cast<std::uint64_t>(ptr))) [[likely]] {
        Block* block = *slot;
        if (block->stream_uses.empty()) [[likely]] {
          if (block->pool->is_small)
            free_found<kSmallIndex>(ptr, slot, block);
          else
            free_found<kLargeIndex>(ptr, slot, block);
          return;
        }
      }
    }
    free_general(ptr);
  }

  [[gnu::noinline]] void free_general(void* ptr) {
    if (alone()) {
      flush();
      return free_body(ptr);
    }
    std::lock_guard<detail::RecursiveSpinLock> lock(mutex);
    if (Block* x = undo_split; x && x->addr == reinterpret_cast<std::uint64_t>(ptr)) {
      undo_split = nullptr;  // plain: defer the free, with its event now
      undo_freed = x;
      record_free(self.pool_id(), ptr, x->size);
      return;
    }
    flush();
    if (plain) {
      Block** slot = allocated_blocks.find(reinterpret_cast<std::uint64_t>(ptr));
      if (slot && (*slot)->stream_uses.empty()) [[likely]] {
        Block* block = *slot;
        if (block->pool->is_small)
          free_found<kSmallIndex, true>(ptr, slot, block);
        else
          free_found<kLargeIndex, true>(ptr, slot, block);
        return;
      }
    }
    free_body(ptr);
  }

  void free_body(void* ptr) {
    Block** slot = allocated_blocks.find(reinterpret_cast<std::uint64_t>(ptr));
    if (!slot) [[unlikely]]
      throw_invalid_pointer(ptr);
    free_found(ptr, slot, *slot);
  }

  template <int kType = kAnyType, bool kRecord = false>
  [[gnu::always_inline]] void free_found(void* ptr, Block** slot, Block* block) {
    constexpr bool kPlain = kType != kAnyType;  // then block has no stream uses
    allocated_blocks.erase(slot);
    // A deferred free decreases allocation now and active later.
    if (!kPlain && !block->stream_uses.empty()) [[unlikely]]
      stop_mirroring();
    block->allocated = false;
    const std::uint64_t size = block->size;
    const int type = kPlain ? kType : pool_type(*block->pool);
    down(kAllocation, type, 1);
    down(kAllocatedBytes, type, static_cast<std::int64_t>(size));
    if (!kPlain || kRecord) record_free(self.pool_id(), ptr, size);  // else untraced
    if (!kPlain && size >= config.max_split_size) [[unlikely]]
      stats.oversize_allocations.decrease(1);
    if (!kPlain && !block->stream_uses.empty()) [[unlikely]]
      insert_events(block);
    else
      free_block<kType>(block);
  }

  [[noreturn, gnu::noinline]] void throw_invalid_pointer(void* ptr) const {
    throw std::invalid_argument("invalid device pointer: " + hex(ptr) + " (not from '" +
                                self.name() + "')");
  }

  static std::string hex(const void* p) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%p", p);
    return buf;
  }

  template <int kType = kAnyType>
  [[gnu::always_inline]] void free_block(Block* block) {
    constexpr bool kPlain = kType != kAnyType;
    const auto original_size = static_cast<std::int64_t>(block->size);
    const auto requested = static_cast<std::int64_t>(block->requested);
    BlockPool& pool = *block->pool;
    std::int64_t net_blocks = 0, net_bytes = 0;
    Block* const prev = block->prev;
    Block* const next = block->next;
    Block* merged = block;
    if (next && can_merge<kPlain>(block, next) && BlockPool::is_pending(next)) [[likely]] {
      // c10 merges both neighbours into the block and inserts it; when the
      // next one is the bins' pending slot, it grows in place instead (same
      // range, same bins) and the freed block object is recycled.
      net_blocks -= 1;
      net_bytes -= static_cast<std::int64_t>(next->size);
      std::uint64_t addr = block->addr;
      std::uint64_t size = block->size + next->size;
      Block* before = prev;
      if (prev && can_merge<kPlain>(block, prev)) {
        net_blocks -= 1;
        net_bytes -= static_cast<std::int64_t>(prev->size);
        addr = prev->addr;
        size += prev->size;
        before = prev->prev;
        pool.erase(prev);
        delete_block(prev);
      }
      next->addr = addr;
      next->size = size;
      next->prev = before;
      if (before) before->next = next;
      next->gc_count_base = pool.get_free_blocks_call_count;
      delete_block(block);
      merged = next;
    } else {
      if (const std::uint64_t subsumed = try_merge_blocks(block, prev, pool)) {
        net_blocks -= 1;
        net_bytes -= static_cast<std::int64_t>(subsumed);
      }
      if (const std::uint64_t subsumed = try_merge_blocks(block, next, pool)) {
        net_blocks -= 1;
        net_bytes -= static_cast<std::int64_t>(subsumed);
      }
      pool.insert_into_blocks(block);
    }
    if (merged->is_split()) {
      net_blocks += 1;
      net_bytes += static_cast<std::int64_t>(merged->size);
    }
    const int type = kPlain ? kType : pool_type(pool);
    // Expandable segments are left out of inactive_split, as in c10.
    if (kPlain || !merged->expandable) add_inactive_split(type, net_blocks, net_bytes);
    if (!kPlain && !active_mirrors_allocation) [[unlikely]] {
      down(kActive, type, 1);
      down(kActiveBytes, type, original_size);
    }
    down(kRequestedBytes, type, requested);
  }

  // c10's test. On the plain path every block is mapped, and a block with
  // stream uses is always allocated (free() hands the uses to events), so
  // the two tests that cannot fail there are left out.
  template <bool kPlain = false>
  [[gnu::always_inline]] static bool can_merge(const Block* dst, const Block* src) {
    if (kPlain) return !src->allocated && src->event_count == 0;
    return !src->allocated && src->event_count == 0 && src->stream_uses.empty() &&
           dst->mapped == src->mapped;
  }
  [[gnu::always_inline]] std::uint64_t try_merge_blocks(Block* dst, Block* src, BlockPool& pool) {
    if (!src || !can_merge(dst, src)) return 0;
    if (dst->prev == src) {  // [src dst]
      dst->addr = src->addr;
      dst->prev = src->prev;
      if (dst->prev) dst->prev->next = dst;
    } else {  // [dst src]
      dst->next = src->next;
      if (dst->next) dst->next->prev = dst;
    }
    const std::uint64_t subsumed = src->size;
    dst->size += subsumed;
    if (src->mapped)
      pool.erase(src);
    else
      pool.unmapped.erase(src);
    delete_block(src);
    return subsumed;
  }

  // --- pending undo ---
  //
  // The commonest cycle on a cached pool is malloc(n); free; malloc(n);
  // free; ... Each malloc takes the pending free block B and splits it into
  // X + remainder R; each free merges X back into R, which gives B again.
  // Instead, free(X) is deferred when nothing has happened since the malloc
  // that produced X, and the next operation decides:
  //
  // - Deferral is exact. Every entry point other than the two below and
  //   allocated_bytes() / reserved_bytes() (pure reads that correct for the
  //   deferred free: it lowers allocated bytes by X's size and no reserved
  //   byte) first calls flush(), which runs the deferred free (free_found:
  //   map erase, counters, free_block's merge) before doing anything else.
  //   Nothing that changes the pool ran between free(X) and that flush, so
  //   the flush leaves exactly the state the free would have left at its
  //   own time. Its trace event, the only thing the free emits, is recorded
  //   at the free itself.
  //
  // - Cancellation is exact. Let S0 be the state before the malloc that
  //   produced X. undo_split is set only on the plain path, only when B
  //   was the bins' pending block, and every other operation but those
  //   two reads clears it, so nothing that changes the pool runs between
  //   that malloc and free(X). If it split B, the free
  //   would merge X with R alone (B's previous neighbour is not a mergeable
  //   free block: in a plain pool, which has been plain since it was made,
  //   every free merges, so no two neighbours are ever both free; asserted
  //   when undo_split is set) and, R being the pending block, grow R in
  //   place back to B's address, size and neighbours; if it took B whole,
  //   the free merges nothing (neither neighbour is free, likewise) and
  //   inserts B into the emptied pending slot. Either way: S0's blocks, links, gc_count_base and
  //   bins (only Block objects and the recycling list differ, which nothing observes). Now a malloc
  //   of a size s2 that rounds (round_plain: no divisions in a plain pool) to X->size on X's
  //   stream. `plain` still holds (only set_memory_fraction and a stream-deferred free end it, and
  //   both flush first). In S0 the first malloc, of rounded size s1 <= X->size, took B as the first
  //   free block >= s1 in (size, address) order. If it split B, X->size == s1 == s2. If it took B
  //   whole, s2 == B.size >= s1, and B is still the first block >= s2:
  //   any block before it in that order would have come first for s1
  //   too. Same pool (the pool of s1 and of s2 is B's), same best fit
  //   (first_at_least answers from the bins, which are S0's), same split
  //   test on the same sizes (a whole-B take of s2 == B.size leaves
  //   nothing to split). It hands out X at X's address and leaves R (or
  //   nothing) as the pending block: the state after the first malloc.
  //   So redo() only hands X out again and puts the counters where free +
  //   malloc would have put them.
  //
  // - Counters. While the free is deferred the counters read as if X were
  //   still allocated (every reader flushes first). A Stat moved by +n then
  //   -n, or -n then +n, ends with the same current and n more freed
  //   (allocated is derived: current + freed - base), and its peaks (the
  //   pool's and all_peak) cannot rise: the value in between was current
  //   before (before the first malloc, or after it), with no peak reset
  //   since. So free + malloc add 1 and X->size to allocation's and
  //   allocated_bytes' freed, and to inactive_split's (blocks, bytes) freed
  //   what the first malloc moved them by (undo_inactive_*: +1 block and
  //   R's bytes when B was a whole segment, X's bytes when B was already
  //   split, or 0 and 1 block / B's bytes when B was taken whole).
  //   requested_bytes moves from X's old request to the new one: n more
  //   freed, and an increase, when the new one is larger, that may set a
  //   peak and goes through up(). These pair increments all depend on X
  //   alone, so a pair only counts itself (undo_pairs); flush(), or a pair
  //   with another request, applies them (apply_pairs) before anything
  //   reads or moves a counter.
  //
  // With a trace (or other threads) the same runs under the lock and the
  // free and reuse events are recorded as without the undo.
  template <bool kRecord = false>
  [[gnu::always_inline]] void* redo(Block* x, std::uint64_t orig_size) {
    undo_freed = nullptr;
    undo_split = x;
    if (x->requested == orig_size) [[likely]]
      ++undo_pairs;
    else
      redo_other_request(x, orig_size);
    void* ptr = reinterpret_cast<void*>(x->addr);
    if (kRecord) record_reuse(self.pool_id(), ptr, x->size, orig_size);
    return ptr;
  }

  // For the public entry points: the undo's two calls without a frame (no
  // other path inlined around them). No trace is being recorded.
  [[gnu::always_inline]] bool can_redo(std::uint64_t orig_size, StreamId stream) const {
    // Single-threaded first: with other threads the fields may be changing
    // under the lock, and nothing here may read them.
    if (!MEMTRAIL_SINGLE_THREADED()) return false;
    const Block* x = undo_freed;
    // (orig_size + 511) & ~511 is round_plain(orig_size), and 0 for 0.
    return x && (orig_size + kMinBlockSize - 1) / kMinBlockSize * kMinBlockSize == x->size &&
           x->stream == stream;
  }
  [[gnu::always_inline]] bool try_defer(void* ptr) {
    if (!MEMTRAIL_SINGLE_THREADED()) return false;  // (as in can_redo)
    Block* x = undo_split;
    if (x && x->addr == reinterpret_cast<std::uint64_t>(ptr)) [[likely]] {
      undo_split = nullptr;
      undo_freed = x;
      return true;
    }
    return false;
  }

  // The counters of `undo_pairs` free + malloc pairs of x, the block whose
  // pairs they are (undo_split or undo_freed), all with x's sizes.
  [[gnu::noinline]] void apply_pairs(const Block* x) {
    const std::int64_t n = undo_pairs;
    undo_pairs = 0;
    HotStat* const c = counters[pool_type(*x->pool)].c;
    c[kAllocation].freed += n;
    c[kAllocatedBytes].freed += n * static_cast<std::int64_t>(x->size);
    c[kInactiveSplit].freed += n * undo_inactive_blocks;
    c[kInactiveSplitBytes].freed += n * undo_inactive_bytes;
    c[kRequestedBytes].freed += n * static_cast<std::int64_t>(x->requested);
  }
  // A pair whose malloc asks for another size (same rounding): the pairs
  // so far, then this one with its requested_bytes change.
  [[gnu::noinline]] void redo_other_request(Block* x, std::uint64_t orig_size) {
    const std::int64_t pairs = undo_pairs;
    undo_pairs = pairs + 1;
    apply_pairs(x);  // x->requested: still the old request
    const int type = pool_type(*x->pool);
    counters[type].c[kRequestedBytes].current -= static_cast<std::int64_t>(x->requested);
    up(kRequestedBytes, type, static_cast<std::int64_t>(orig_size));
    x->requested = orig_size;
  }

  // Recorded stacks start at the caller of the public entry point.
  [[gnu::noinline]] void* malloc_traced(std::uint64_t size, StreamId stream, const void* caller) {
    memtrail::detail::AllocatorEntry entry(caller);
    return malloc(size, stream, false);
  }
  [[gnu::noinline]] void free_traced(void* p, const void* caller) {
    memtrail::detail::AllocatorEntry entry(caller);
    free(p, false);
  }

  // Called first by every entry point but the deferred pair's own.
  [[gnu::always_inline]] void flush() {
    if (undo_freed || undo_pairs) [[unlikely]]
      flush_slow();
    undo_split = nullptr;
  }
  [[gnu::noinline]] void flush_slow() { flush_deferred(); }
  [[gnu::always_inline]] void flush_deferred() {
    if (undo_pairs) [[unlikely]]
      apply_pairs(undo_freed ? undo_freed : undo_split);
    if (!undo_freed) return;
    Block* x = undo_freed;
    undo_freed = nullptr;
    Block** slot = allocated_blocks.find(x->addr);
    assert(slot && *slot == x && x->stream_uses.empty() && plain);
    void* ptr = reinterpret_cast<void*>(x->addr);
    if (x->pool->is_small)
      free_found<kSmallIndex>(ptr, slot, x);  // no event: recorded at the free
    else
      free_found<kLargeIndex>(ptr, slot, x);
  }

  // --- streams and events ---

  void record_stream(void* ptr, StreamId stream) {
    std::lock_guard<detail::RecursiveSpinLock> lock(mutex);
    flush();
    Block** slot = allocated_blocks.find(reinterpret_cast<std::uint64_t>(ptr));
    if (!slot) throw std::invalid_argument("record_stream: invalid device pointer: " + hex(ptr));
    Block* block = *slot;
    if (stream == block->stream) return;  // uses on the allocation stream need no sync
    auto pos = std::lower_bound(block->stream_uses.begin(), block->stream_uses.end(), stream);
    if (pos == block->stream_uses.end() || *pos != stream) block->stream_uses.insert(pos, stream);
  }

  void insert_events(Block* block) {
    std::vector<StreamId> streams;
    streams.swap(block->stream_uses);
    for (StreamId s : streams) {
      block->event_count++;
      const std::uint64_t event = device_api ? device_api->record_event(device_index(), s) : 0;
      cuda_events[s].push_back({++recorded[s], block, event});
    }
  }

  void process_events() {
    for (auto it = cuda_events.begin(); it != cuda_events.end();) {
      auto& queue = it->second;
      const std::uint64_t done = completed[it->first];
      while (!queue.empty() && event_complete(queue.front(), done)) {
        Block* block = queue.front().block;
        queue.pop_front();
        if (--block->event_count == 0) free_block(block);
      }
      it = queue.empty() ? cuda_events.erase(it) : std::next(it);
    }
  }

  bool event_complete(const StreamEvent& e, std::uint64_t done) {
    if (e.seq > done && (!e.device_event || !device_api->event_done(e.device_event))) return false;
    if (e.device_event) device_api->destroy_event(e.device_event);
    return true;
  }
  int device_index() const {
    return std::max(0, self.device() >= 0 ? self.device() : upstream.device());
  }

  void synchronize_stream(StreamId stream) {
    std::lock_guard<detail::RecursiveSpinLock> lock(mutex);
    flush();
    completed[stream] = recorded[stream];
  }

  void synchronize() {
    std::lock_guard<detail::RecursiveSpinLock> lock(mutex);
    flush();
    for (auto& [s, seq] : recorded) completed[s] = seq;
  }

  void synchronize_and_free_events() {
    stats.num_sync_all_streams++;
    for (auto& [s, seq] : recorded) completed[s] = seq;
    for (auto& [s, queue] : cuda_events)
      for (auto& e : queue) {
        if (e.device_event) {  // PyTorch: cudaEventSynchronize, then the block is free
          device_api->wait_event(e.device_event);
          device_api->destroy_event(e.device_event);
        }
        if (--e.block->event_count == 0) free_block(e.block);
      }
    cuda_events.clear();
  }

  // --- giving memory back ---

  void release_block(Block* block) {
    stats.num_device_free++;
    total_allocated_memory -= block->size;
    down(kSegment, pool_type(*block->pool), 1);
    down(kReservedBytes, pool_type(*block->pool), static_cast<std::int64_t>(block->size));
    if (block->size >= config.max_split_size) stats.oversize_segments.decrease(1);
    block->pool->erase(block);
    record_segment(EventKind::segment_release, self.pool_id(), block->addr, block->size);
    upstream.release_segment(reinterpret_cast<void*>(block->addr), block->size, kMinBlockSize);
    delete_block(block);
  }

  void release_blocks(BlockPool& pool) {
    std::vector<Block*> blocks, to_unmap;
    pool.append_sorted(blocks);  // release_block takes only the block itself
    for (Block* block : blocks) {
      if (block->expandable)
        to_unmap.push_back(block);
      else if (!block->prev && !block->next)
        release_block(block);
    }
    for (Block* block : to_unmap) {
      unmap_block(block);
      if (!block->prev && !block->next) release_expandable_segment(block);
    }
  }

  bool release_cached_blocks() {
    synchronize_and_free_events();
    release_blocks(large);
    release_blocks(small);
    return true;
  }

  bool release_available_cached_blocks(const AllocParams& p) {
    if (config.max_split_size == UINT64_MAX) return false;
    BlockPool& pool = *p.pool;
    const std::uint64_t key_size = p.size < config.max_split_size ? config.max_split_size : p.size;
    FreeBins* bins = pool.bins(p.stream);
    if (!bins) return false;
    Block* first = bins->first_at_least(key_size, nullptr);
    if (!first || first->expandable) {
      // No single block is large enough: free oversize blocks, largest
      // first, walking down from just below key_size.
      std::vector<Block*> blocks;
      bins->append_sorted(blocks);
      auto below = std::partition_point(blocks.begin(), blocks.end(),
                                        [&](const Block* b) { return b->size < key_size; });
      std::uint64_t released = 0;
      for (auto it = below; it != blocks.begin() && released < key_size;) {
        Block* b = *--it;
        if (b->size < config.max_split_size) break;
        if (!b->expandable) {
          released += b->size;
          release_block(b);
        }
      }
      if (released < key_size) return false;
    } else {
      release_block(first);
    }
    return true;
  }

  void garbage_collect_cached_blocks() {
    const auto gc_threshold = static_cast<std::uint64_t>(
        config.garbage_collection_threshold * static_cast<double>(allowed_memory_maximum));
    if (total_allocated_memory <= gc_threshold) return;
    const std::uint64_t target = total_allocated_memory - gc_threshold;
    std::uint64_t reclaimed = 0, total_age = 0;
    int freeable = 0;
    std::vector<Block*> blocks;
    large.append_sorted(blocks);
    for (Block* b : blocks)
      if (!b->is_split()) {
        total_age += large.gc_count(b);
        ++freeable;
      }
    if (freeable == 0) return;
    bool freed = true;
    while (reclaimed < target && freed && freeable > 0) {
      const double age_threshold = static_cast<double>(total_age) / freeable;
      freed = false;
      blocks.clear();
      large.append_sorted(blocks);  // release_block takes only the block itself
      for (Block* block : blocks) {
        if (!block->is_split() && !block->expandable &&
            static_cast<double>(large.gc_count(block)) >= age_threshold) {
          freed = true;
          reclaimed += block->size;
          total_age -= large.gc_count(block);
          --freeable;
          release_block(block);
        }
      }
    }
  }

  // --- expandable segments ---

  Block* find_expandable_block(StreamId stream, BlockPool* pool, std::uint64_t size) {
    Block key;
    key.stream = stream;
    auto allocatable = [](const Block* b) {
      return b && !b->allocated && b->event_count == 0 && b->stream_uses.empty();
    };
    auto has_room = [&](const Block* b) {
      std::uint64_t bytes = 0;
      while (bytes < size && allocatable(b)) {
        bytes += b->size;
        b = b->next;
      }
      return bytes >= size;
    };
    for (auto it = pool->unmapped.lower_bound(&key);
         it != pool->unmapped.end() && (*it)->stream == stream; ++it) {
      Block* c = *it;
      if (allocatable(c->prev)) c = c->prev;
      if (has_room(c)) return c;
    }
    const std::uint64_t page = pool->is_small ? kSmallBuffer : kLargeBuffer;
    const std::uint64_t space = expandable_space(pool);
    void* base = upstream.reserve_address_space(space);
    if (!base) return nullptr;
    auto* es = new ExpandableSegment;
    es->base = reinterpret_cast<std::uint64_t>(base);
    es->size = space;
    es->page = page;
    es->stream = stream;
    es->mapped.assign(space / page, false);
    expandable_segments.push_back(es);
    Block* candidate = new_block(es->base, space, stream, pool);
    candidate->mapped = false;
    candidate->expandable = es;
    pool->unmapped.insert(candidate);
    return candidate;
  }

  // Maps whole pages covering [addr, addr+size); returns the mapped size,
  // 0 (nothing left mapped) when a page cannot be had.
  std::uint64_t map_range(ExpandableSegment* es, std::uint64_t addr, std::uint64_t size,
                          UpstreamFailure* why) {
    const std::uint64_t begin = (addr - es->base) / es->page;
    const std::uint64_t end = ceil_div(addr + size - es->base, es->page);
    for (std::uint64_t i = begin; i < end; ++i) {
      if (!upstream.map_pages(reinterpret_cast<void*>(es->base + i * es->page), es->page, why)) {
        for (std::uint64_t j = begin; j < i; ++j) {
          upstream.unmap_pages(reinterpret_cast<void*>(es->base + j * es->page), es->page);
          es->mapped[j] = false;
        }
        return 0;
      }
      es->mapped[i] = true;
    }
    return (end - begin) * es->page;
  }

  bool map_block(Block* to_map, std::uint64_t size, UpstreamFailure* why) {
    const std::uint64_t mapped = map_range(to_map->expandable, to_map->addr, size, why);
    if (mapped == 0) return false;
    BlockPool& pool = *to_map->pool;
    pool.unmapped.erase(to_map);
    to_map->mapped = true;
    if (mapped < to_map->size) {
      Block* remaining =
          new_block(to_map->addr + mapped, to_map->size - mapped, to_map->stream, &pool);
      remaining->mapped = false;
      remaining->expandable = to_map->expandable;
      remaining->prev = to_map;
      remaining->next = to_map->next;
      if (remaining->next) remaining->next->prev = remaining;
      to_map->next = remaining;
      pool.unmapped.insert(remaining);
      to_map->size = mapped;
    }
    try_merge_blocks(to_map, to_map->prev, pool);
    try_merge_blocks(to_map, to_map->next, pool);
    pool.insert_into_blocks(to_map);
    total_allocated_memory += mapped;
    up(kReservedBytes, pool_type(pool), static_cast<std::int64_t>(mapped));
    stats.num_device_alloc++;
    record_segment(EventKind::segment_reserve, self.pool_id(), to_map->addr, mapped,
                   SegmentDetail::map);
    return true;
  }

  // The address space one expandable segment reserves: the device's size
  // and an eighth (1 TiB on a device without a capacity).
  std::uint64_t expandable_space(const BlockPool* pool) const {
    const std::uint64_t page = pool->is_small ? kSmallBuffer : kLargeBuffer;
    const std::uint64_t total = upstream.capacity();
    const std::uint64_t space = total == UINT64_MAX ? (1ull << 40) : total + total / 8;
    return std::max(page, space / page * page);
  }

  Block* try_allocate_expandable_block(StreamId stream, BlockPool* pool, std::uint64_t size,
                                       UpstreamFailure* why) {
    // A larger request could never be mapped inside one segment (PyTorch's
    // would fail to map); the walk below would run off the segment's end.
    if (size > expandable_space(pool)) {
      if (why)
        *why = {Refusal::capacity, "larger than an expandable segment (" +
                                       std::to_string(expandable_space(pool)) + " bytes)"};
      return nullptr;
    }
    Block* candidate = find_expandable_block(stream, pool, size);
    if (!candidate) {
      if (why) *why = {Refusal::system, "address space reservation failed"};
      return nullptr;
    }
    if (!candidate->mapped && !map_block(candidate, std::min(candidate->size, size), why))
      return nullptr;
    while (candidate->size < size) {
      const std::uint64_t remaining = size - candidate->size;
      Block* next = candidate->next;
      if (!map_block(next, std::min(remaining, next->size), why)) return nullptr;
      candidate = next;  // map_block merged it with the free block before
    }
    pool->erase(candidate);
    return candidate;
  }

  void unmap_block(Block* block) {
    ExpandableSegment* es = block->expandable;
    // Only whole pages inside the block can go.
    const std::uint64_t first = ceil_div(block->addr - es->base, es->page) * es->page + es->base;
    const std::uint64_t last =
        (block->addr + block->size - es->base) / es->page * es->page + es->base;
    if (first >= last) return;
    const std::uint64_t unmapped = last - first;
    for (std::uint64_t a = first; a < last; a += es->page) {
      upstream.unmap_pages(reinterpret_cast<void*>(a), es->page);
      es->mapped[(a - es->base) / es->page] = false;
    }
    BlockPool& pool = *block->pool;
    pool.erase(block);
    const std::uint64_t before = first - block->addr;
    if (before > 0) {
      Block* before_free = new_block(block->addr, before, block->stream, &pool);
      before_free->expandable = es;
      before_free->prev = block->prev;
      if (before_free->prev) before_free->prev->next = before_free;
      before_free->next = block;
      block->prev = before_free;
      pool.insert_into_blocks(before_free);
    }
    const std::uint64_t after = block->size - (before + unmapped);
    if (after > 0) {
      Block* after_free = new_block(last, after, block->stream, &pool);
      after_free->expandable = es;
      after_free->prev = block;
      after_free->next = block->next;
      if (after_free->next) after_free->next->prev = after_free;
      block->next = after_free;
      pool.insert_into_blocks(after_free);
    }
    block->addr = first;
    block->size = unmapped;
    block->mapped = false;
    try_merge_blocks(block, block->prev, pool);
    try_merge_blocks(block, block->next, pool);
    pool.unmapped.insert(block);
    total_allocated_memory -= unmapped;
    down(kReservedBytes, pool_type(pool), static_cast<std::int64_t>(unmapped));
    stats.num_device_free++;
    record_segment(EventKind::segment_release, self.pool_id(), first, unmapped, SegmentDetail::map);
  }

  void release_expandable_segment(Block* block) {
    ExpandableSegment* es = block->expandable;
    block->pool->unmapped.erase(block);
    upstream.release_address_space(reinterpret_cast<void*>(es->base), es->size);
    expandable_segments.erase(
        std::find(expandable_segments.begin(), expandable_segments.end(), es));
    delete es;
    delete_block(block);
  }

  // --- snapshot ---

  PoolSnapshot snapshot_locked() const {
    std::vector<Block*> all;
    collect_blocks(all);
    std::sort(all.begin(), all.end(),
              [](const Block* a, const Block* b) { return a->addr < b->addr; });
    PoolSnapshot snap;
    snap.pool = self.name();
    snap.kind = "caching";
    SegmentState* seg = nullptr;
    const Block* last = nullptr;
    for (const Block* b : all) {
      if (!b->mapped) {
        last = nullptr;  // an expandable segment shows one segment per mapped range
        continue;
      }
      const bool continues = last && last->next == b;
      if (!continues) {
        snap.segments.emplace_back();
        seg = &snap.segments.back();
        seg->address = b->addr;
        seg->stream = b->stream;
        seg->segment_type = b->pool->is_small ? "small" : "large";
        seg->is_expandable = b->expandable != nullptr;
      }
      BlockState bs;
      bs.address = b->addr;
      bs.size = b->size;
      bs.requested_size = b->requested;
      bs.state = b->allocated         ? BlockState::State::active_allocated
                 : b->event_count > 0 ? BlockState::State::active_awaiting_free
                                      : BlockState::State::inactive;
      seg->total_size += b->size;
      if (bs.state == BlockState::State::active_allocated) seg->allocated_size += b->size;
      if (bs.state != BlockState::State::inactive) {
        seg->active_size += b->size;
        seg->requested_size += b->requested;
      } else {
        bs.requested_size = 0;
      }
      seg->blocks.push_back(bs);
      last = b;
    }
    return snap;
  }
};

// --- public API ---

CachingPool::CachingPool(Upstream& upstream, CachingConfig config, std::string name)
    : Resource(std::move(name), upstream.space(), PoolKind::caching, &upstream, upstream.device()),
      impl_(std::make_unique<Impl>(*this, upstream, std::move(config))) {
  register_pmr_forwarders();  // do_allocate's entry sees past std::pmr at -O0
  if (impl_->config.expandable_segments && !upstream.supports_address_reservation())
    throw ConfigError("expandable_segments: upstream '" + upstream.name() +
                      "' cannot reserve address space");
}

CachingPool::~CachingPool() = default;

// Without a trace the entry guard would do nothing: skip it.
// The traced calls are out of line, so that the untraced ones need no frame.
void* CachingPool::malloc(std::uint64_t size, StreamId stream) {
  Impl& m = *impl_;
  if (!tracing()) [[likely]] {
    if (m.can_redo(size, stream)) [[likely]]
      return m.redo(m.undo_freed, size);
    return m.malloc(size, stream, true);
  }
  return m.malloc_traced(size, stream, __builtin_return_address(0));
}
void CachingPool::free(void* p) {
  Impl& m = *impl_;
  if (!tracing()) [[likely]] {
    if (m.try_defer(p)) [[likely]]
      return;
    return m.free(p, true);
  }
  m.free_traced(p, __builtin_return_address(0));
}
void CachingPool::record_stream(void* p, StreamId stream) {
  impl_->record_stream(p, stream);
}
void CachingPool::synchronize_stream(StreamId stream) {
  impl_->synchronize_stream(stream);
}
void CachingPool::synchronize() {
  impl_->synchronize();
}

void CachingPool::empty_cache() {
  std::lock_guard<detail::RecursiveSpinLock> lock(impl_->mutex);
  impl_->flush();
  impl_->release_cached_blocks();
}

void CachingPool::set_memory_fraction(double fraction) {
  if (!(fraction >= 0.0 && fraction <= 1.0))
    throw std::invalid_argument("memory fraction " + std::to_string(fraction) +
                                " is out of range, it must be in [0, 1]");
  std::lock_guard<detail::RecursiveSpinLock> lock(impl_->mutex);
  impl_->flush();
  impl_->allowed_memory_maximum =
      static_cast<std::uint64_t>(fraction * static_cast<double>(impl_->upstream.capacity()));
  impl_->set_fraction = true;
  impl_->update_plain();
}

void CachingPool::add_free_memory_callback(std::function<bool()> callback) {
  std::lock_guard<detail::RecursiveSpinLock> lock(impl_->mutex);
  impl_->flush();
  impl_->free_callbacks.push_back(std::move(callback));
}

void CachingPool::attach_oom_observer(OomObserver observer) {
  std::lock_guard<detail::RecursiveSpinLock> lock(impl_->mutex);
  impl_->flush();
  impl_->oom_observers.push_back(std::move(observer));
}

DeviceStats CachingPool::stats() const {
  std::lock_guard<detail::RecursiveSpinLock> lock(impl_->mutex);
  impl_->flush();
  return impl_->device_stats();
}

// These two read around a deferred free instead of running it (a read
// changes nothing, so the undo stays possible): it lowers allocated_bytes by
// the block's size and leaves reserved_bytes as it is.
std::uint64_t CachingPool::allocated_bytes() const {
  std::lock_guard<detail::RecursiveSpinLock> lock(impl_->mutex);
  const Block* deferred = impl_->undo_freed;
  return static_cast<std::uint64_t>(impl_->current_sum(Impl::kAllocatedBytes)) -
         (deferred ? deferred->size : 0);
}

std::uint64_t CachingPool::reserved_bytes() const {
  std::lock_guard<detail::RecursiveSpinLock> lock(impl_->mutex);
  return static_cast<std::uint64_t>(impl_->current_sum(Impl::kReservedBytes));
}

std::string CachingPool::memory_summary(bool abbreviated) const {
  return alloc::memory_summary(stats(), std::max(0, device()), abbreviated);
}

void CachingPool::reset_peak_memory_stats() {
  std::lock_guard<detail::RecursiveSpinLock> lock(impl_->mutex);
  impl_->flush();
  impl_->reset_peaks();
}

void CachingPool::reset_accumulated_memory_stats() {
  std::lock_guard<detail::RecursiveSpinLock> lock(impl_->mutex);
  impl_->flush();
  impl_->reset_accumulated();
}

PoolSnapshot CachingPool::snapshot() const {
  std::lock_guard<detail::RecursiveSpinLock> lock(impl_->mutex);
  impl_->flush();
  return impl_->snapshot_locked();
}

const CachingConfig& CachingPool::config() const {
  return impl_->config;
}
Upstream& CachingPool::upstream_resource() const {
  return impl_->upstream;
}
std::uint64_t CachingPool::round_size(std::uint64_t size) const {
  return impl_->round_size(size);
}

std::uint64_t CachingPool::allocation_size(std::uint64_t size) {
  if (size <= kSmallSize) return kSmallBuffer;
  if (size < kMinLargeAlloc) return kLargeBuffer;
  return kRoundLarge * ceil_div(size, kRoundLarge);
}

void* CachingPool::do_allocate(std::size_t bytes, std::size_t alignment) {
  MEMTRAIL_ALLOCATOR_ENTRY();
  if (alignment > kMinBlockSize)
    throw std::bad_alloc();  // blocks are only guaranteed 512-byte alignment
  void* p = malloc(bytes ? bytes : 1, 0);
  return p;
}

void CachingPool::do_deallocate(void* p, std::size_t, std::size_t) {
  MEMTRAIL_ALLOCATOR_ENTRY();
  free(p);
}

}  // namespace memtrail::alloc
