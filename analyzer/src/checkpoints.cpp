#include "checkpoints.hpp"

#include <algorithm>

namespace memtrail::detail {

namespace {
// 64 checkpoints over the file: a replay reads ~1.5 % of it plus a chunk.
constexpr std::uint64_t kCheckpointsPerFile = 64;
}  // namespace

std::size_t Checkpoint::bytes() const {
  std::size_t n = sizeof(Checkpoint);
  for (const PoolCheckpoint& p : pools)
    n += sizeof(PoolCheckpoint) + p.segments.capacity() * sizeof(p.segments[0]) +
         p.blocks.capacity() * sizeof(BlockInfo);
  return n;
}

Checkpoints::Checkpoints(std::uint64_t file_bytes, std::size_t budget_bytes)
    : interval_(std::max<std::uint64_t>(1, file_bytes / kCheckpointsPerFile)),
      budget_(budget_bytes) {}

void Checkpoints::at_chunk(Engine& engine, std::uint64_t offset, bool any_event,
                           std::uint64_t max_time_before) {
  if (disabled_ || !any_event || offset < next_offset_) return;
  Checkpoint c;
  c.chunk_offset = offset;
  c.max_time_before = max_time_before;
  c.any_event_before = any_event;
  c.events_before = engine.events_processed();
  c.last_time_before = engine.last_time_ns();
  if (!engine.checkpoint(c.pools, budget_ / 2)) {
    // One live set takes half the budget: no checkpoint can help enough.
    disabled_ = true;
    list_.clear();
    bytes_ = 0;
    return;
  }
  bytes_ += c.bytes();
  list_.push_back(std::move(c));
  next_offset_ = offset + interval_;
  while (bytes_ > budget_ && list_.size() > 1) thin();
  next_offset_ = list_.back().chunk_offset + interval_;
}

void Checkpoints::thin() {
  std::size_t w = 0;
  bytes_ = 0;
  for (std::size_t r = 1; r < list_.size(); r += 2) {  // keep the later of each pair
    bytes_ += list_[r].bytes();
    list_[w++] = std::move(list_[r]);
  }
  list_.resize(w);
  interval_ *= 2;
}

const Checkpoint* Checkpoints::for_time(std::uint64_t t) const {
  // max_time_before only grows along the file: the last one at or before t.
  auto it =
      std::upper_bound(list_.begin(), list_.end(), t,
                       [](std::uint64_t x, const Checkpoint& c) { return x < c.max_time_before; });
  return it == list_.begin() ? nullptr : &*std::prev(it);
}

const Checkpoint* Checkpoints::for_position(std::uint64_t events) const {
  auto it =
      std::upper_bound(list_.begin(), list_.end(), events,
                       [](std::uint64_t x, const Checkpoint& c) { return x < c.events_before; });
  return it == list_.begin() ? nullptr : &*std::prev(it);
}

}  // namespace memtrail::detail
