// Engine state in and out of the session's checkpoints (checkpoints.hpp).
#include "checkpoints.hpp"
#include "engine.hpp"

namespace memtrail::detail {

bool Engine::checkpoint(std::vector<PoolCheckpoint>& out, std::size_t max_bytes) {
  out.clear();
  std::size_t bytes = 0;
  for (std::size_t id = 0; id < pools_.size(); ++id) {
    PoolState& p = pools_[id];
    if (!p.included || (p.live.size() == 0 && p.segments.empty() && p.used == 0)) continue;
    bytes += p.live.size() * sizeof(BlockInfo) + p.segments.size() * 24;
    if (bytes > max_bytes) {
      out.clear();
      return false;
    }
    PoolCheckpoint c;
    c.pool = static_cast<std::uint32_t>(id);
    c.used = p.used;
    c.reserved = p.reserved;
    c.has_segments = p.has_segments;
    c.has_blocks = p.has_blocks;
    c.segments.assign(p.segments.begin(), p.segments.end());
    c.blocks.reserve(p.live.size());
    p.live.for_each([&](std::uint64_t a, LiveBlock& b) {
      c.blocks.push_back(BlockInfo{a, b.size, b.time_ns, sites_[b.site].stack, b.thread});
    });
    out.push_back(std::move(c));
  }
  return true;
}

void Engine::restore(const std::vector<PoolCheckpoint>& pools, std::uint64_t events_before,
                     std::uint64_t last_time_ns) {
  event_index_ = events_before;
  last_time_ns_ = last_time_ns;
  for (const PoolCheckpoint& c : pools) {
    PoolState& p = pool_state(c.pool);
    if (!p.included) continue;
    p.used = c.used;
    p.reserved = c.reserved;
    p.has_segments = c.has_segments;
    p.has_blocks = c.has_blocks;
    p.segments = SegmentTable(c.segments.begin(), c.segments.end());
    for (const BlockInfo& b : c.blocks) {
      LiveBlock& l = *p.live.try_emplace(b.address).first;
      l.size = b.size;
      l.time_ns = b.alloc_ns;
      l.site = site_index(p, c.pool, b.stack.value);
      l.thread = b.thread;
    }
    if (!p.is_upstream) total_used_ += c.used;
  }
}

}  // namespace memtrail::detail
