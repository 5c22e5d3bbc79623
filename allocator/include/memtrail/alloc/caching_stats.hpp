// Statistics of CachingPool with PyTorch's names and meanings
// (c10::CachingDeviceAllocator::DeviceStats), plus the text renderings users
// know: memory_stats()'s flat dict, memory_summary()'s 75-column table, and
// the out-of-memory message.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>

namespace memtrail::alloc {

struct Stat {
  std::int64_t current = 0, peak = 0, allocated = 0, freed = 0;
  void increase(std::int64_t amount) {
    current += amount;
    if (current > peak) peak = current;
    allocated += amount;
  }
  void decrease(std::int64_t amount) {
    current -= amount;
    freed += amount;
  }
  void reset_peak() { peak = current; }
  void reset_accumulated() { allocated = freed = 0; }
};

enum StatType : int { kAggregate = 0, kSmallPool = 1, kLargePool = 2 };
using StatArray = std::array<Stat, 3>;

struct DeviceStats {
  StatArray allocation, segment, active, inactive_split;
  StatArray allocated_bytes, reserved_bytes, active_bytes, inactive_split_bytes, requested_bytes;
  std::int64_t num_alloc_retries = 0, num_ooms = 0, num_sync_all_streams = 0;
  std::int64_t num_device_alloc = 0, num_device_free = 0;
  Stat oversize_allocations, oversize_segments;
  std::int64_t max_split_size = -1;  // SIZE_MAX cast to int64, as PyTorch reports it

  void reset_peak();
  void reset_accumulated();
};

// torch.cuda.memory_stats(): flat keys sorted by name
// ("active.all.allocated", ..., "requested_bytes.small_pool.peak").
std::map<std::string, std::int64_t> flatten(const DeviceStats& stats);

// torch.cuda.memory_summary(device, abbreviated), byte for byte.
std::string memory_summary(const DeviceStats& stats, int device, bool abbreviated = false);

// c10's format_size: "N bytes" (<= 1 KiB), then "%.2f KiB|MiB|GiB".
std::string pytorch_format_size(std::uint64_t bytes);

// The OutOfMemoryError text of current PyTorch. `allowed` is 0 when no
// memory fraction is set; proc_info is NVML's per-process line (usually
// empty here).
struct OomReport {
  std::uint64_t alloc_size = 0;  // the segment size that failed
  int device = 0;
  std::uint64_t total = 0, free = 0, allowed = 0;
  std::uint64_t allocated = 0, reserved = 0;
  std::string proc_info;
};
std::string oom_message(const OomReport& report);

}  // namespace memtrail::alloc
