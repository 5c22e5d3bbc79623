// BfcPool: the decision logic of tsl's BFCAllocator (AllocateRawInternal,
// FindChunkPtr, SplitChunk, Extend, TryToCoalesce, DeallocateFreeRegions)
// with chunks in a vector addressed by handles, as in the original.
#include "memtrail/alloc/bfc_pool.hpp"

#include <algorithm>
#include <bit>
#include <cassert>
#include <cerrno>
#include <cstdlib>
#include <memory_resource>
#include <mutex>
#include <stdexcept>
#include <vector>

#include <nlohmann/json.hpp>

#include "addr_map.hpp"
#include "best_fit_bins.hpp"
#include "memtrail/recorder.hpp"
#include "memtrail/size.hpp"
#include "node_cache.hpp"
#include "pmr_forwarders.hpp"
#include "spin_lock.hpp"

namespace memtrail::alloc {
namespace {

using ChunkHandle = std::size_t;
constexpr ChunkHandle kInvalid = SIZE_MAX;

struct Chunk {
  std::uint64_t ptr = 0, size = 0, requested = 0;
  bool in_use = false;
  bool in_bin = false;        // in the free bins
  std::uint32_t bin_pos = 0;  // owned by the free bins
  ChunkHandle prev = kInvalid, next = kInvalid;
  std::uint64_t region = 0;  // base address of its region
};

struct Region {
  std::uint64_t size = 0;
  ChunkHandle first = kInvalid;
};

double parse_fraction(const std::string& key, const std::string& text) {
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || errno == ERANGE || !(v > 0.0 && v <= 1.0))
    throw ConfigError(key + ": '" + text + "' must be a number in (0, 1]");
  return v;
}

bool parse_bool(const std::string& key, const std::string& text) {
  std::string t;
  for (char c : text) t += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (t == "true" || t == "1") return true;
  if (t == "false" || t == "0") return false;
  throw ConfigError(key + ": expected true or false, found '" + text + "'");
}

}  // namespace

BfcOptions BfcOptions::from_environment() {
  BfcOptions o;
  if (const char* v = std::getenv("XLA_PYTHON_CLIENT_PREALLOCATE"); v && *v)
    o.preallocate = parse_bool("XLA_PYTHON_CLIENT_PREALLOCATE", v);
  if (const char* v = std::getenv("XLA_CLIENT_MEM_FRACTION"); v && *v)
    o.memory_fraction = parse_fraction("XLA_CLIENT_MEM_FRACTION", v);
  if (const char* v = std::getenv("XLA_PYTHON_CLIENT_MEM_FRACTION"); v && *v)
    o.memory_fraction = parse_fraction("XLA_PYTHON_CLIENT_MEM_FRACTION", v);
  return o;
}

BfcOptions BfcOptions::parse(std::string_view text) {
  return parse(text, BfcOptions{});
}

BfcOptions BfcOptions::parse(std::string_view text, BfcOptions o) {
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t comma = text.find(',', pos);
    std::string item(
        text.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos));
    pos = comma == std::string_view::npos ? text.size() : comma + 1;
    item.erase(std::remove(item.begin(), item.end(), ' '), item.end());
    if (item.empty()) continue;
    std::size_t colon = item.find(':');
    if (colon == std::string::npos) throw ConfigError("'" + item + "': expected key:value");
    std::string key = item.substr(0, colon), value = item.substr(colon + 1);
    if (key == "preallocate") {
      o.preallocate = parse_bool(key, value);
    } else if (key == "memory_fraction") {
      o.memory_fraction = parse_fraction(key, value);
    } else if (key == "garbage_collection") {
      o.garbage_collection = parse_bool(key, value);
    } else if (key == "fragmentation_fraction") {
      o.fragmentation_fraction = parse_fraction(key, value);
    } else if (key == "memory_limit") {
      std::string error;
      auto size = parse_size(value, &error);
      if (!size || *size == 0)
        throw ConfigError("memory_limit: " + (size ? "must not be 0" : error));
      o.memory_limit = *size;
    } else {
      throw ConfigError("unknown key '" + key + "'");
    }
  }
  return o;
}

std::map<std::string, std::int64_t> BfcStats::to_map() const {
  return {{"num_allocs", num_allocs},
          {"bytes_in_use", bytes_in_use},
          {"peak_bytes_in_use", peak_bytes_in_use},
          {"largest_alloc_size", largest_alloc_size},
          {"bytes_limit", bytes_limit},
          {"bytes_reserved", bytes_reserved},
          {"peak_bytes_reserved", peak_bytes_reserved},
          {"pool_bytes", pool_bytes},
          {"peak_pool_bytes", peak_pool_bytes},
          {"largest_free_block_bytes", largest_free_block_bytes}};
}

// bin_for_size, inline for the hot path.
[[gnu::always_inline]] inline int tsl_bin(std::uint64_t bytes) {
  const std::uint64_t v = std::max<std::uint64_t>(bytes, BfcPool::kMinAllocationSize) >> 8;
  return std::min(BfcPool::kNumBins - 1, static_cast<int>(std::bit_width(v)) - 1);
}

struct BfcPool::Impl {
  struct ChunkAccess {
    std::vector<Chunk>* chunks;  // handles index it; it may reallocate
    std::uint64_t size(ChunkHandle h) const { return (*chunks)[h].size; }
    std::uint64_t addr(ChunkHandle h) const { return (*chunks)[h].ptr; }
    std::uint32_t& pos(ChunkHandle h) const { return (*chunks)[h].bin_pos; }
  };
  // tsl's 21 bins are (size, ptr)-ordered sets searched from the request's
  // bin upwards: the first fit found is the smallest chunk >= the request,
  // lowest address first. One BestFitBins gives the same chunk: exact
  // 256-byte classes up to 2 MiB, an ordered set above. (bin_for_size still
  // gives a size's tsl bin for callers.)
  using FreeBins = detail::BestFitBins<ChunkHandle, ChunkAccess>;
  static constexpr std::uint32_t kExactClasses = (2u << 20) / kMinAllocationSize;

  BfcPool& self;
  Upstream& upstream;
  BfcOptions options;
  mutable detail::SpinLock mutex;
  std::vector<Chunk> chunks;
  // Unused handles, last freed first, chained through their chunks' `next`
  // (no vector to grow on the coalescing path).
  ChunkHandle free_handles = kInvalid;
  detail::NodeCache nodes;  // set nodes without system allocator calls
  FreeBins bins{ChunkAccess{&chunks}, kMinAllocationSize, kExactClasses, &nodes};
  detail::AddrMap<ChunkHandle> in_use;      // ptr -> chunk
  std::map<std::uint64_t, Region> regions;  // base -> region
  std::uint64_t memory_limit = 0;
  std::uint64_t curr_region_allocation_bytes = 0;
  std::uint64_t total_region_allocated_bytes = 0;
  BfcStats stats;
  UpstreamFailure last_failure;
  std::uint64_t max_fragmentation = 0;  // max_internal_fragmentation(), fixed at construction
  // The pending undo (see "Pending undo" below): the chunk the last
  // operation handed out, when its free may be deferred, and the chunk
  // whose free is deferred. At most one is set.
  ChunkHandle undo_split = kInvalid;
  ChunkHandle undo_freed = kInvalid;

  Impl(BfcPool& s, Upstream& up, BfcOptions o) : self(s), upstream(up), options(o) {
    if (options.memory_limit) {
      memory_limit = options.memory_limit;
    } else {
      const std::uint64_t cap = upstream.capacity();
      memory_limit =
          cap == UINT64_MAX
              ? UINT64_MAX
              : static_cast<std::uint64_t>(options.memory_fraction * static_cast<double>(cap));
    }
    curr_region_allocation_bytes = rounded_bytes(
        options.preallocate ? memory_limit : std::min<std::uint64_t>(memory_limit, 2ull << 20));
    stats.bytes_limit = static_cast<std::int64_t>(std::min<std::uint64_t>(memory_limit, INT64_MAX));
    max_fragmentation = options.fragmentation_fraction > 0.0
                            ? static_cast<std::uint64_t>(options.fragmentation_fraction *
                                                         static_cast<double>(memory_limit))
                            : (128ull << 20);
  }

  ~Impl() {
    flush();
    for (auto& [base, region] : regions) {
      record_segment(EventKind::segment_release, self.pool_id(), base, region.size);
      upstream.release_segment(reinterpret_cast<void*>(base), region.size, kMinAllocationSize);
    }
  }

  [[gnu::always_inline]] ChunkHandle allocate_chunk() {
    if (free_handles != kInvalid) {
      ChunkHandle h = free_handles;
      free_handles = chunks[h].next;
      chunks[h] = Chunk{};
      return h;
    }
    chunks.emplace_back();
    return chunks.size() - 1;
  }
  [[gnu::always_inline]] void deallocate_chunk(ChunkHandle h) {
    chunks[h].next = free_handles;
    free_handles = h;
  }

  [[gnu::always_inline]] void insert_free_chunk_into_bin(ChunkHandle h) {
    Chunk& c = chunks[h];
    c.in_bin = true;
    bins.insert(h);
  }
  [[gnu::always_inline]] void remove_free_chunk_from_bin(ChunkHandle h) {
    bins.erase(h);
    chunks[h].in_bin = false;
  }

  std::uint64_t max_internal_fragmentation() const { return max_fragmentation; }

  [[gnu::always_inline]] void split_chunk(ChunkHandle h, std::uint64_t num_bytes) {
    ChunkHandle h_new = allocate_chunk();
    Chunk& c = chunks[h];
    Chunk& n = chunks[h_new];
    n.ptr = c.ptr + num_bytes;
    n.size = c.size - num_bytes;
    n.region = c.region;
    c.size = num_bytes;
    n.prev = h;
    n.next = c.next;
    c.next = h_new;
    if (n.next != kInvalid) chunks[n.next].prev = h_new;
    insert_free_chunk_into_bin(h_new);
  }

  [[gnu::always_inline]] void* find_chunk_ptr(std::uint64_t rounded, std::uint64_t num_bytes) {
    const ChunkHandle h = bins.first_at_least(rounded, kInvalid);
    if (h == kInvalid) return nullptr;
    remove_free_chunk_from_bin(h);
    const bool split =
        chunks[h].size >= rounded * 2 || chunks[h].size - rounded >= max_internal_fragmentation();
    if (split) split_chunk(h, rounded);
    Chunk& c = chunks[h];
    // Its free may be deferred when that free would give back exactly the
    // free chunks before this call: it will coalesce with nothing but the
    // split-off remainder (no two neighbours are ever both free: every
    // free coalesces). Unsplit, a request of B's size must not split B
    // either: with a fragmentation limit of 0 it would (a zero-byte
    // remainder, as in tsl).
    assert(!(c.prev != kInvalid && !chunks[c.prev].in_use));
    assert(split || !(c.next != kInvalid && !chunks[c.next].in_use));
    undo_split = split || max_internal_fragmentation() != 0 ? h : kInvalid;
    c.requested = num_bytes;
    c.in_use = true;
    in_use.insert(c.ptr, h);
    ++stats.num_allocs;
    stats.bytes_in_use += static_cast<std::int64_t>(c.size);
    stats.peak_bytes_in_use = std::max(stats.peak_bytes_in_use, stats.bytes_in_use);
    stats.largest_alloc_size =
        std::max(stats.largest_alloc_size, static_cast<std::int64_t>(c.size));
    return reinterpret_cast<void*>(c.ptr);
  }

  bool extend(std::uint64_t rounded) {
    std::uint64_t available = memory_limit - total_region_allocated_bytes;
    available = available / kMinAllocationSize * kMinAllocationSize;
    if (rounded > available) return false;
    bool increased = false;
    while (rounded > curr_region_allocation_bytes) {
      curr_region_allocation_bytes = doubled(curr_region_allocation_bytes);
      increased = true;
    }
    std::uint64_t bytes = std::min(curr_region_allocation_bytes, available);
    void* mem = upstream.allocate_segment(bytes, kMinAllocationSize, &last_failure);
    while (!mem) {
      // tsl multiplies by a float constant: same arithmetic, same sizes.
      constexpr float kBackpedalFactor = 0.9f;
      const std::uint64_t smaller =
          rounded_bytes(static_cast<std::uint64_t>(static_cast<float>(bytes) * kBackpedalFactor));
      // Below 2560 bytes the rounding undoes the cut (2304 * 0.9 rounds back
      // up to 2304), and tsl would spin here while the upstream refuses.
      bytes = smaller < bytes ? smaller : bytes - kMinAllocationSize;
      if (bytes < rounded) return false;
      mem = upstream.allocate_segment(bytes, kMinAllocationSize, &last_failure);
    }
    if (!increased) curr_region_allocation_bytes = doubled(curr_region_allocation_bytes);
    total_region_allocated_bytes += bytes;
    stats.pool_bytes += static_cast<std::int64_t>(bytes);
    stats.peak_pool_bytes = std::max(stats.peak_pool_bytes, stats.pool_bytes);
    const auto base = reinterpret_cast<std::uint64_t>(mem);
    record_segment(EventKind::segment_reserve, self.pool_id(), base, bytes);
    ChunkHandle h = allocate_chunk();
    Chunk& c = chunks[h];
    c.ptr = base;
    c.size = bytes;
    c.region = base;
    regions[base] = Region{bytes, h};
    insert_free_chunk_into_bin(h);  // a new region has no neighbours to coalesce with
    return true;
  }

  [[gnu::always_inline]] void merge(ChunkHandle h1, ChunkHandle h2) {  // h2 follows h1; both free
    Chunk& c1 = chunks[h1];
    Chunk& c2 = chunks[h2];
    c1.next = c2.next;
    if (c1.next != kInvalid) chunks[c1.next].prev = h1;
    c1.size += c2.size;
    deallocate_chunk(h2);
  }

  [[gnu::always_inline]] ChunkHandle try_to_coalesce(ChunkHandle h) {
    if (chunks[h].next != kInvalid && !chunks[chunks[h].next].in_use) {
      remove_free_chunk_from_bin(chunks[h].next);
      merge(h, chunks[h].next);
    }
    if (chunks[h].prev != kInvalid && !chunks[chunks[h].prev].in_use) {
      ChunkHandle p = chunks[h].prev;
      remove_free_chunk_from_bin(p);
      merge(p, h);
      h = p;
    }
    return h;
  }

  bool deallocate_free_regions(std::uint64_t rounded) {
    if (!options.garbage_collection) return false;
    std::vector<std::uint64_t> free_regions;
    std::uint64_t total_free = 0;
    for (auto& [base, region] : regions) {
      bool any_use = false;
      for (ChunkHandle h = region.first; h != kInvalid; h = chunks[h].next)
        if (chunks[h].in_use) {
          any_use = true;
          break;
        }
      if (!any_use) {
        free_regions.push_back(base);
        total_free += region.size;
      }
    }
    if (total_free == 0) return false;
    if (rounded > memory_limit - total_region_allocated_bytes + total_free) return false;
    for (std::uint64_t base : free_regions) {
      Region region = regions[base];
      for (ChunkHandle h = region.first; h != kInvalid;) {
        ChunkHandle next = chunks[h].next;
        if (chunks[h].in_bin) remove_free_chunk_from_bin(h);
        deallocate_chunk(h);
        h = next;
      }
      record_segment(EventKind::segment_release, self.pool_id(), base, region.size);
      upstream.release_segment(reinterpret_cast<void*>(base), region.size, kMinAllocationSize);
      total_region_allocated_bytes -= region.size;
      stats.pool_bytes -= static_cast<std::int64_t>(region.size);
      regions.erase(base);
    }
    return true;
  }

  // `untraced`: the caller saw no trace being recorded. While the process
  // also has one thread, no other thread can enter the pool during a call
  // that reaches neither the upstream nor the recorder (a fitting free
  // chunk, a free), so those run without the lock; a miss takes it before
  // growing (the upstream, e.g. a CUDA runtime, may start threads).
  void* allocate(std::uint64_t num_bytes, bool untraced) {
    // One compare for both rare cases: 0, and a size whose rounding would
    // wrap around (XLA never asks for one: its sizes are int64).
    if (num_bytes - 1 >= kMaxRequestBytes) [[unlikely]] {
      if (num_bytes == 0) return nullptr;
      refuse_oversize(num_bytes);
    }
    // rounded_bytes(), inline: a shift instead of a call and a division.
    const std::uint64_t rounded =
        (num_bytes + kMinAllocationSize - 1) / kMinAllocationSize * kMinAllocationSize;
    if (untraced && MEMTRAIL_SINGLE_THREADED()) [[likely]] {
      // (The public entry point tried redo() already.) The deferred free,
      // inline: this frame is already set up for the allocation below.
      if (const ChunkHandle x = undo_freed; x != kInvalid) [[unlikely]] {
        undo_freed = kInvalid;
        deallocate_locked<true>(reinterpret_cast<void*>(chunks[x].ptr));
      }
      if (void* p = find_chunk_ptr(rounded, num_bytes)) [[likely]]
        return p;
      std::lock_guard<detail::SpinLock> lock(mutex);
      flush();
      return allocate_miss(num_bytes, rounded);
    }
    std::unique_lock<detail::SpinLock> lock(mutex);
    if (const ChunkHandle x = undo_freed; x != kInvalid && chunks[x].size == rounded) {
      void* p = redo(x, num_bytes);
      if (tracing()) record_reuse(self.pool_id(), p, chunks[x].size, num_bytes);
      return p;
    }
    flush();
    if (void* p = find_chunk_ptr(rounded, num_bytes)) [[likely]] {
      if (tracing())
        record_reuse(self.pool_id(), p,
                     chunks[*in_use.find(reinterpret_cast<std::uint64_t>(p))].size, num_bytes);
      return p;
    }
    return allocate_miss(num_bytes, rounded);
  }

  [[noreturn, gnu::noinline]] void refuse_oversize(std::uint64_t num_bytes) const {
    throw OutOfMemoryError("'" + self.name() + "': cannot allocate " + std::to_string(num_bytes) +
                           " bytes: more than the largest request a pool serves (" +
                           std::to_string(kMaxRequestBytes) + " bytes)");
  }

  // Region sizes double on each growth (as in tsl); they stop at 2^63, the
  // first power of two above any request, so they never wrap to 0.
  static std::uint64_t doubled(std::uint64_t bytes) {
    constexpr std::uint64_t kTop = kMaxRequestBytes / 2 + 1;
    return bytes >= kTop ? kTop * 2 : bytes * 2;
  }

  // No free chunk fits: grow, collect free regions, or report out-of-memory.
  [[gnu::noinline]] void* allocate_miss(std::uint64_t num_bytes, std::uint64_t rounded) {
    void* p = nullptr;
    if (extend(rounded)) p = find_chunk_ptr(rounded, num_bytes);
    if (!p && deallocate_free_regions(rounded) && extend(rounded))
      p = find_chunk_ptr(rounded, num_bytes);
    if (p) {
      record_alloc(self.pool_id(), p, chunks[*in_use.find(reinterpret_cast<std::uint64_t>(p))].size,
                   num_bytes);
      return p;
    }
    const std::string message =
        self.name() + " ran out of memory trying to allocate " + format_size(num_bytes) +
        " (rounded to " + std::to_string(rounded) +
        "). In use: " + format_size(static_cast<std::uint64_t>(stats.bytes_in_use)) + " of limit " +
        format_size(memory_limit) + "; regions: " + format_size(total_region_allocated_bytes) +
        "; largest free block: " + format_size(largest_free_block()) +
        (last_failure.message.empty() ? std::string() : "; upstream: " + last_failure.message);
    if (tracing()) {
      nlohmann::json state = snapshot_locked().to_json();
      state["request"] = num_bytes;
      state["rounded"] = rounded;
      state["stats"] = stats_locked().to_map();
      Event e;
      e.kind = EventKind::oom;
      e.pool = self.pool_id();
      e.size = num_bytes;
      e.requested = rounded;
      e.aux = intern_string(state.dump());
      record(e);
    }
    if (last_failure.refusal == Refusal::limit)
      throw LimitError(last_failure.which, last_failure.message, rounded, last_failure.in_use,
                       last_failure.limit);
    throw OutOfMemoryError(message);
  }

  void deallocate(void* p, bool untraced) {
    if (!p) return;
    const auto addr = reinterpret_cast<std::uint64_t>(p);
    if (untraced && MEMTRAIL_SINGLE_THREADED()) [[likely]] {  // nothing here can start a thread
      if (const ChunkHandle x = undo_split; x != kInvalid && chunks[x].ptr == addr) [[likely]] {
        undo_split = kInvalid;  // defer the free (untraced: no event)
        undo_freed = x;
        return;
      }
      flush();
      return deallocate_locked<true>(p);
    }
    std::lock_guard<detail::SpinLock> lock(mutex);
    if (const ChunkHandle x = undo_split; x != kInvalid && chunks[x].ptr == addr) {
      undo_split = kInvalid;  // defer the free, with its event now
      undo_freed = x;
      record_free(self.pool_id(), p, chunks[x].size);
      return;
    }
    flush();
    deallocate_locked<false>(p);
  }

  // --- pending undo ---
  //
  // As in CachingPool (caching_pool.cpp, "pending undo"): in the cycle
  // allocate(n); free; allocate(n); ... each allocation takes chunk B and
  // splits it into X + remainder R, each free coalesces X and R back into
  // B. A free of the chunk the last operation handed out is deferred:
  //
  // - Deferral is exact: every entry point other than the two below and
  //   the two pure reads (stats(), region_count(): see Stats) first calls
  //   flush(), which runs the deferred free (deallocate_locked: stats,
  //   coalescing, bins) before anything else; nothing that changes the
  //   pool ran between, so it leaves the state the free would have left.
  //   The free's event is recorded at the free.
  // - Cancellation is exact. Let S0 be the state before the allocation
  //   that produced X (undo_split is cleared by every other operation
  //   but the pure reads, which change nothing).
  //   The free would coalesce X with R alone (X's previous neighbour is in
  //   use, and unsplit both are: every free coalesces, so no two
  //   neighbours are ever both free; asserted when undo_split is set), so
  //   the free chunks are S0's: same ranges, same neighbours (the bins may
  //   hold them in another internal order, but first_at_least answers the
  //   smallest chunk >= the request, lowest address first, from the set of
  //   free chunks alone). An allocation rounding to s2 == X.size: the
  //   first one, rounding to s1 <= X.size, took B as the first free chunk
  //   >= s1 in (size, address) order; any chunk before B in that order
  //   and >= s2 would have come first for s1, so B is again the one. If
  //   the first split B, s1 == X.size == s2 and the split test (the same
  //   sizes) splits again at the same place; if it took B whole, s2 ==
  //   B.size and nothing is left to split (B.size >= 2 s2 is impossible, and
  //   a waste of 0 >= the limit too: undo_split is not set when the limit
  //   is 0). It hands out X, at X's address: the state after the first
  //   allocation.
  // - Stats: while the free is deferred the stored ones read as if X were
  //   in use; stats() corrects them (stats_locked), region_count() needs
  //   nothing (reads change nothing, so they need not end the undo).
  //   Free + allocation leave bytes_in_use
  //   where it was (its peak and largest_alloc_size cannot rise: reached
  //   before, and only reset_peak_stats, which flushes, lowers a peak) and
  //   add one to num_allocs.
  [[gnu::always_inline]] void* redo(ChunkHandle x, std::uint64_t num_bytes) {
    undo_freed = kInvalid;
    undo_split = x;
    Chunk& c = chunks[x];
    c.requested = num_bytes;
    ++stats.num_allocs;
    return reinterpret_cast<void*>(c.ptr);
  }

  // For the public entry points: the undo's two calls without a frame (no
  // other path inlined around them). No trace is being recorded.
  [[gnu::always_inline]] bool can_redo(std::uint64_t num_bytes) const {
    // Single-threaded first: with other threads the fields (and `chunks`,
    // which may move) may be changing under the lock, and nothing here may
    // read them.
    if (!MEMTRAIL_SINGLE_THREADED()) return false;
    const ChunkHandle x = undo_freed;
    // (rounded_bytes, inline; 0 for 0, which no chunk handed out has)
    return x != kInvalid && chunks[x].size == (num_bytes + kMinAllocationSize - 1) /
                                                  kMinAllocationSize * kMinAllocationSize;
  }
  [[gnu::always_inline]] bool try_defer(void* p) {
    if (!MEMTRAIL_SINGLE_THREADED()) return false;  // (as in can_redo)
    const ChunkHandle x = undo_split;
    if (x != kInvalid && chunks[x].ptr == reinterpret_cast<std::uint64_t>(p)) [[likely]] {
      undo_split = kInvalid;
      undo_freed = x;
      return true;
    }
    return false;
  }

  // Recorded stacks start at the caller of the public entry point.
  [[gnu::noinline]] void* allocate_traced(std::uint64_t bytes, const void* caller) {
    memtrail::detail::AllocatorEntry entry(caller);
    return allocate(bytes, false);
  }
  [[gnu::noinline]] void deallocate_traced(void* p, const void* caller) {
    memtrail::detail::AllocatorEntry entry(caller);
    deallocate(p, false);
  }

  // Called first by every entry point but the deferred pair's own.
  [[gnu::always_inline]] void flush() {
    if (undo_freed != kInvalid) [[unlikely]]
      flush_free();
    undo_split = kInvalid;
  }
  [[gnu::noinline]] void flush_free() {
    const ChunkHandle x = undo_freed;
    undo_freed = kInvalid;
    deallocate_locked<true>(reinterpret_cast<void*>(chunks[x].ptr));  // no event: recorded
  }

  // kUntraced: no trace can be on (single thread, untraced at entry).
  template <bool kUntraced>
  [[gnu::always_inline]] void deallocate_locked(void* p) {
    ChunkHandle* slot = in_use.find(reinterpret_cast<std::uint64_t>(p));
    if (!slot) [[unlikely]]
      throw_not_ours();
    const ChunkHandle h = *slot;
    in_use.erase(slot);
    Chunk& c = chunks[h];
    c.in_use = false;
    c.requested = 0;
    stats.bytes_in_use -= static_cast<std::int64_t>(c.size);
    if (!kUntraced) record_free(self.pool_id(), p, c.size);
    insert_free_chunk_into_bin(try_to_coalesce(h));
  }

  [[noreturn, gnu::noinline]] void throw_not_ours() const {
    throw std::invalid_argument(self.name() + ": free of a pointer it did not allocate");
  }

  std::uint64_t largest_free_block() const { return bins.largest_size(); }

  // Read around a deferred free instead of running it (a read changes
  // nothing, so the undo stays possible): it would lower bytes_in_use by
  // X's size and coalesce X with a free next chunk R into B, and the free
  // chunks would then be the others and B (>= R), so the largest is the
  // bins' largest or B. Nothing else it touches is a stat.
  [[gnu::always_inline]] BfcStats stats_locked() const {
    BfcStats s = stats;
    std::uint64_t largest = largest_free_block();
    if (undo_freed != kInvalid) {
      const Chunk& x = chunks[undo_freed];
      const bool next_free = x.next != kInvalid && !chunks[x.next].in_use;
      s.bytes_in_use -= static_cast<std::int64_t>(x.size);
      largest = std::max(largest, x.size + (next_free ? chunks[x.next].size : 0));
    }
    s.largest_free_block_bytes = static_cast<std::int64_t>(largest);
    return s;
  }

  PoolSnapshot snapshot_locked() const {
    PoolSnapshot snap;
    snap.pool = self.name();
    snap.kind = "bfc";
    for (auto& [base, region] : regions) {
      SegmentState seg;
      seg.address = base;
      seg.total_size = region.size;
      seg.segment_type = "region";
      for (ChunkHandle h = region.first; h != kInvalid; h = chunks[h].next) {
        const Chunk& c = chunks[h];
        BlockState b;
        b.address = c.ptr;
        b.size = c.size;
        b.requested_size = c.in_use ? c.requested : 0;
        b.state = c.in_use ? BlockState::State::active_allocated : BlockState::State::inactive;
        if (c.in_use) {
          seg.allocated_size += c.size;
          seg.active_size += c.size;
          seg.requested_size += c.requested;
        }
        seg.blocks.push_back(b);
      }
      snap.segments.push_back(std::move(seg));
    }
    return snap;
  }
};

BfcPool::BfcPool(Upstream& upstream, BfcOptions options, std::string name)
    : Resource(std::move(name), upstream.space(), PoolKind::bfc, &upstream, upstream.device()),
      impl_(std::make_unique<Impl>(*this, upstream, options)) {
  register_pmr_forwarders();  // do_allocate's entry sees past std::pmr at -O0
  if (!(options.memory_fraction > 0.0 && options.memory_fraction <= 1.0))
    throw ConfigError("memory_fraction: " + std::to_string(options.memory_fraction) +
                      " must be in (0, 1]");
  if (options.preallocate) {
    if (impl_->memory_limit == UINT64_MAX)
      throw ConfigError("preallocate: upstream '" + upstream.name() +
                        "' has no capacity to take a fraction of; set memory_limit");
    if (!impl_->extend(kMinAllocationSize))
      throw OutOfMemoryError(this->name() + ": could not preallocate " +
                             format_size(impl_->memory_limit) + " from '" + upstream.name() + "'" +
                             (impl_->last_failure.message.empty()
                                  ? std::string()
                                  : ": " + impl_->last_failure.message));
  }
}

BfcPool::~BfcPool() = default;

// Without a trace the entry guard would do nothing: skip it.
// The traced calls are out of line, so that the untraced ones need no frame.
void* BfcPool::allocate_raw(std::uint64_t bytes) {
  Impl& m = *impl_;
  if (!tracing()) [[likely]] {
    if (m.can_redo(bytes)) [[likely]]
      return m.redo(m.undo_freed, bytes);
    return m.allocate(bytes, true);
  }
  return m.allocate_traced(bytes, __builtin_return_address(0));
}
void BfcPool::deallocate_raw(void* p) {
  Impl& m = *impl_;
  if (!tracing()) [[likely]] {
    if (m.try_defer(p)) [[likely]]
      return;
    return m.deallocate(p, true);
  }
  m.deallocate_traced(p, __builtin_return_address(0));
}

BfcStats BfcPool::stats() const {
  std::lock_guard<detail::SpinLock> lock(impl_->mutex);
  return impl_->stats_locked();  // reads around a deferred free
}

void BfcPool::reset_peak_stats() {
  std::lock_guard<detail::SpinLock> lock(impl_->mutex);
  impl_->flush();
  impl_->stats.peak_bytes_in_use = impl_->stats.bytes_in_use;
  impl_->stats.peak_pool_bytes = impl_->stats.pool_bytes;
  impl_->stats.peak_bytes_reserved = impl_->stats.bytes_reserved;
}

std::uint64_t BfcPool::memory_limit() const {
  return impl_->memory_limit;
}

std::size_t BfcPool::region_count() const {
  std::lock_guard<detail::SpinLock> lock(impl_->mutex);
  return impl_->regions.size();  // (a deferred free changes no region)
}

PoolSnapshot BfcPool::snapshot() const {
  std::lock_guard<detail::SpinLock> lock(impl_->mutex);
  impl_->flush();
  return impl_->snapshot_locked();
}

std::uint64_t BfcPool::rounded_bytes(std::uint64_t bytes) {
  return kMinAllocationSize * ((bytes + kMinAllocationSize - 1) / kMinAllocationSize);
}

int BfcPool::bin_for_size(std::uint64_t bytes) {
  return tsl_bin(bytes);
}

void* BfcPool::do_allocate(std::size_t bytes, std::size_t alignment) {
  MEMTRAIL_ALLOCATOR_ENTRY();
  if (alignment > kMinAllocationSize) throw std::bad_alloc();
  return allocate_raw(bytes ? bytes : 1);
}

void BfcPool::do_deallocate(void* p, std::size_t, std::size_t) {
  MEMTRAIL_ALLOCATOR_ENTRY();
  deallocate_raw(p);
}

}  // namespace memtrail::alloc
