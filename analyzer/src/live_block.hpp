// A block live in the analysis pass (Engine's live state, one per address
// per pool): what the Engine and the block trackers (trackers/
// block_tracker.hpp) know of it until it is freed.
#pragma once

#include <cstdint>

namespace memtrail::detail {

struct LiveBlock {
  std::uint64_t size = 0;
  std::uint64_t time_ns = 0;
  std::uint32_t site = 0;        // index into Engine::sites_
  std::uint32_t scope_inst = 0;  // innermost open scope instance at alloc, 0 = none
  std::uint32_t thread = 0;
  std::uint8_t in_range = 0;
  std::uint8_t leak_class = 0;  // LeakClass from a reachability event
};

}  // namespace memtrail::detail
