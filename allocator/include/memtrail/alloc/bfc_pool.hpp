// BfcPool: XLA/TensorFlow's best-fit-with-coalescing arena
// (xla/tsl/framework/bfc_allocator.cc @00df9eef), over any Upstream.
//
// Sizes round up to 256 bytes; free chunks sit in 21 bins by size
// ([256<<b, 256<<(b+1)), the last open-ended), each ordered by (size,
// address). Allocation takes the smallest fitting chunk, searching from the
// request's bin upwards; it splits only if the chunk is at least twice the
// rounded size or the waste reaches max_internal_fragmentation (128 MiB, or
// fragmentation_fraction x limit). Freed chunks always coalesce with free
// neighbours. Memory comes in regions: either one region of the whole limit
// (preallocate, JAX's default: 75% of the device) made at construction, or
// regions that grow by doubling from min(limit, 2 MiB), backing off by 0.9
// while still >= the request when the upstream refuses. On out-of-memory,
// wholly free regions are returned and the allocation is retried once
// (garbage collection). There is no empty_cache and no stream.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "memtrail/alloc/errors.hpp"
#include "memtrail/alloc/pool_snapshot.hpp"
#include "memtrail/alloc/resource.hpp"

namespace memtrail::alloc {

struct BfcOptions {
  // Limit = memory_limit if set, else memory_fraction x upstream capacity.
  std::uint64_t memory_limit = 0;
  double memory_fraction = 0.75;      // XLA_PYTHON_CLIENT_MEM_FRACTION
  bool preallocate = true;            // XLA_PYTHON_CLIENT_PREALLOCATE (allow_growth = !this)
  bool garbage_collection = true;     // TF_ENABLE_GPU_GARBAGE_COLLECTION
  double fragmentation_fraction = 0;  // 0: max internal fragmentation is 128 MiB

  // Reads XLA_PYTHON_CLIENT_PREALLOCATE (true/false/1/0),
  // XLA_PYTHON_CLIENT_MEM_FRACTION or XLA_CLIENT_MEM_FRACTION (0 < f <= 1)
  // over the defaults above. ConfigError names the variable.
  static BfcOptions from_environment();
  // "preallocate:False,memory_fraction:0.9,garbage_collection:True,
  //  fragmentation_fraction:0.1,memory_limit:8GiB"; unknown keys are errors.
  static BfcOptions parse(std::string_view text);
  static BfcOptions parse(std::string_view text, BfcOptions base);
};

// Device.memory_stats() of JAX.
struct BfcStats {
  std::int64_t num_allocs = 0;
  std::int64_t bytes_in_use = 0, peak_bytes_in_use = 0, largest_alloc_size = 0;
  std::int64_t bytes_limit = 0;
  std::int64_t bytes_reserved = 0, peak_bytes_reserved = 0;  // reservations (not modelled: 0)
  std::int64_t pool_bytes = 0, peak_pool_bytes = 0;          // bytes of all regions
  std::int64_t largest_free_block_bytes = 0;

  std::map<std::string, std::int64_t> to_map() const;
};

class BfcPool final : public Resource {
 public:
  static constexpr std::uint64_t kMinAllocationSize = 256;
  static constexpr int kNumBins = 21;

  // Throws OutOfMemoryError when preallocation cannot get its region, and
  // ConfigError for a bad fraction.
  explicit BfcPool(Upstream& upstream, BfcOptions options = BfcOptions::from_environment(),
                   std::string name = "bfc pool");
  ~BfcPool() override;

  // nullptr for 0 bytes. Throws OutOfMemoryError.
  void* allocate_raw(std::uint64_t bytes);
  void deallocate_raw(void* p);

  BfcStats stats() const;
  void reset_peak_stats();
  std::uint64_t memory_limit() const;
  std::size_t region_count() const;
  PoolSnapshot snapshot() const;

  static std::uint64_t rounded_bytes(std::uint64_t bytes);
  static int bin_for_size(std::uint64_t bytes);

 protected:
  void* do_allocate(std::size_t bytes, std::size_t alignment) override;
  void do_deallocate(void* p, std::size_t bytes, std::size_t alignment) override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace memtrail::alloc
