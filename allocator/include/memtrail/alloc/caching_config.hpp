// CachingPool configuration in PYTORCH_CUDA_ALLOC_CONF syntax:
//   "max_split_size_mb:128,roundup_power2_divisions:[256:1,512:2,>:8],expandable_segments:True"
// Parsed like c10's CUDAAllocatorConfig (same tokens, same interval rules
// for roundup_power2_divisions, including `>` filling from the last listed
// interval inclusive). Unknown keys and bad values throw ConfigError naming
// the key. Keys that only matter to CUDA pinned memory or graphs are
// accepted and validated but change nothing here.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "memtrail/alloc/errors.hpp"

namespace memtrail::alloc {

struct CachingConfig {
  static constexpr std::size_t kRoundupIntervals = 16;  // [2^(20+i), 2^(21+i)), ends open

  std::uint64_t max_split_size = UINT64_MAX;           // bytes; UINT64_MAX = unlimited
  std::uint64_t max_non_split_rounding = 20ull << 20;  // bytes
  std::array<std::uint64_t, kRoundupIntervals> roundup_power2_divisions{};  // 0/1 = off
  double garbage_collection_threshold = 0.0;  // 0 = off; needs a memory fraction
  bool expandable_segments = false;
  // Accepted for compatibility; no effect on a host or virtual pool.
  bool release_lock_on_cudamalloc = false;
  bool pinned_use_cuda_host_register = false;
  std::uint64_t pinned_num_register_threads = 1;
  bool pinned_use_background_threads = false;
  std::uint64_t pinned_reserve_segment_size_mb = 0;
  bool graph_capture_record_stream_reuse = false;
  std::string text;  // the string it was parsed from

  // Throws ConfigError ("max_split_size_mb: ...", "unknown key 'foo'").
  static CachingConfig parse(std::string_view text);
  // MEMTRAIL_POOL_CONF, or defaults when unset. Errors name the variable.
  static CachingConfig from_environment();

  // Divisions for a request of `size` bytes (the interval of floor(log2)).
  std::uint64_t divisions_for(std::uint64_t size) const;
};

}  // namespace memtrail::alloc
