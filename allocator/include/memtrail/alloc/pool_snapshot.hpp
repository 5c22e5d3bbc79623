// A pool's segments and blocks at one moment, shaped like PyTorch's
// torch.cuda.memory._snapshot()["segments"]. Used for the `oom` event's state
// and for the GUI's fragmentation view.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace memtrail::alloc {

struct BlockState {
  enum class State { active_allocated, active_awaiting_free, inactive };
  std::uint64_t address = 0, size = 0, requested_size = 0;
  State state = State::inactive;
};

struct SegmentState {
  std::uint64_t address = 0, total_size = 0;
  std::uint64_t allocated_size = 0, active_size = 0, requested_size = 0;
  std::uint64_t stream = 0;
  std::string segment_type;  // "small" | "large" (CachingPool), "region" (BfcPool)
  bool is_expandable = false;
  std::vector<BlockState> blocks;  // by address
};

struct PoolSnapshot {
  std::string pool;                    // pool name
  std::string kind;                    // "caching" | "bfc"
  std::vector<SegmentState> segments;  // by address

  nlohmann::json to_json() const;
};

const char* to_string(BlockState::State state);

}  // namespace memtrail::alloc
