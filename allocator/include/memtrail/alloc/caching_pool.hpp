// CachingPool: PyTorch's CUDACachingAllocator (native backend), exactly, over
// any Upstream.
//
//   VirtualResource device(16ull << 30);          // or CapacityLimitedResource, CUDA, heap...
//   CachingPool pool(device, CachingConfig::parse("max_split_size_mb:128"));
//   void* p = pool.malloc(3 << 20);               // or through std::pmr containers
//   pool.free(p);
//   pool.memory_stats();                          // PyTorch's keys
//
// The rules (reference/pytorch-jax-allocators.md §1, c10 @001074d2): sizes
// round to 512 B (or power-of-two divisions); requests <= 1 MiB use the small
// pool and 2 MiB segments, < 10 MiB use 20 MiB segments, larger ones their
// size rounded to 2 MiB; best fit is the first free block on the same stream
// in (stream, size, address) order, subject to max_split_size; blocks split
// and merge within a segment; a failed segment allocation runs the free
// callbacks, garbage collection, release of oversize cached blocks, then
// empty_cache and one retry, then reports out-of-memory. Cross-stream use
// (record_stream) defers a free until those streams are synchronized. CUDA
// events are modelled abstractly: an event recorded on a stream completes
// when synchronize_stream() (or synchronize()) is called for that stream; as
// in PyTorch, completed events are processed at the next malloc. Over a CUDA
// upstream (Upstream::device_api()), each event is also a real CUDA event on
// that stream, complete when the device has run past it.
//
// Thread-safe: one recursive lock, like the original's recursive mutex (a
// spinlock here, not taken by a cache hit or a free while the process has
// one thread and nothing is traced; see docs/allocators.md). Every alloc,
// cache hit, free, segment reserve/release and OOM is a trace event when
// tracing.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "memtrail/alloc/caching_config.hpp"
#include "memtrail/alloc/caching_stats.hpp"
#include "memtrail/alloc/pool_snapshot.hpp"
#include "memtrail/alloc/resource.hpp"

namespace memtrail::alloc {

using StreamId = std::uint64_t;

// torch._C._cuda_attach_out_of_memory_observer's callback:
// (device, alloc_size, device_total_or_allowed, device_free).
using OomObserver = std::function<void(int device, std::uint64_t alloc_size,
                                       std::uint64_t total_or_allowed, std::uint64_t device_free)>;

class CachingPool final : public Resource {
 public:
  static constexpr std::uint64_t kMinBlockSize = 512;
  static constexpr std::uint64_t kSmallSize = 1ull << 20;
  static constexpr std::uint64_t kSmallBuffer = 2ull << 20;
  static constexpr std::uint64_t kLargeBuffer = 20ull << 20;
  static constexpr std::uint64_t kMinLargeAlloc = 10ull << 20;
  static constexpr std::uint64_t kRoundLarge = 2ull << 20;

  // Throws ConfigError when the config is not usable over this upstream
  // (expandable_segments on an upstream without address reservation).
  explicit CachingPool(Upstream& upstream, CachingConfig config = CachingConfig::from_environment(),
                       std::string name = "caching pool");
  ~CachingPool() override;  // returns all segments; live blocks are lost

  // nullptr for size 0 (PyTorch returns a null pointer). Throws
  // OutOfMemoryError with PyTorch's message.
  void* malloc(std::uint64_t size, StreamId stream = 0);
  // Throws std::invalid_argument for a pointer this pool did not hand out.
  void free(void* p);
  void record_stream(void* p, StreamId stream);
  void synchronize_stream(StreamId stream);
  void synchronize();
  void empty_cache();

  // torch.cuda.set_per_process_memory_fraction: reserved memory may not
  // exceed fraction * upstream capacity. Enables garbage collection.
  void set_memory_fraction(double fraction);
  // Called (pool lock held) before allocating a new segment when no cached
  // block fits; return true if anything was freed.
  void add_free_memory_callback(std::function<bool()> callback);
  void attach_oom_observer(OomObserver observer);

  DeviceStats stats() const;
  // allocated_bytes.all.current and reserved_bytes.all.current, cheaply.
  std::uint64_t allocated_bytes() const;
  std::uint64_t reserved_bytes() const;
  std::map<std::string, std::int64_t> memory_stats() const { return flatten(stats()); }
  std::string memory_summary(bool abbreviated = false) const;
  void reset_peak_memory_stats();
  void reset_accumulated_memory_stats();
  PoolSnapshot snapshot() const;

  const CachingConfig& config() const;
  Upstream& upstream_resource() const;
  std::uint64_t round_size(std::uint64_t size) const;
  static std::uint64_t allocation_size(std::uint64_t rounded);

 protected:
  // pmr entry points: stream 0; alignments up to 512 bytes.
  void* do_allocate(std::size_t bytes, std::size_t alignment) override;
  void do_deallocate(void* p, std::size_t bytes, std::size_t alignment) override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace memtrail::alloc
