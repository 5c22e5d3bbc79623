#include "memtrail/alloc/pool_snapshot.hpp"

#include <nlohmann/json.hpp>

namespace memtrail::alloc {

const char* to_string(BlockState::State state) {
  switch (state) {
    case BlockState::State::active_allocated:
      return "active_allocated";
    case BlockState::State::active_awaiting_free:
      return "active_awaiting_free";
    case BlockState::State::inactive:
      return "inactive";
  }
  return "inactive";
}

nlohmann::json PoolSnapshot::to_json() const {
  nlohmann::json segs = nlohmann::json::array();
  for (const SegmentState& s : segments) {
    nlohmann::json blocks = nlohmann::json::array();
    for (const BlockState& b : s.blocks)
      blocks.push_back({{"address", b.address},
                        {"size", b.size},
                        {"requested_size", b.requested_size},
                        {"state", to_string(b.state)}});
    segs.push_back({{"address", s.address},
                    {"total_size", s.total_size},
                    {"allocated_size", s.allocated_size},
                    {"active_size", s.active_size},
                    {"requested_size", s.requested_size},
                    {"stream", s.stream},
                    {"segment_type", s.segment_type},
                    {"is_expandable", s.is_expandable},
                    {"blocks", std::move(blocks)}});
  }
  return {{"pool", pool}, {"kind", kind}, {"segments", std::move(segs)}};
}

}  // namespace memtrail::alloc
