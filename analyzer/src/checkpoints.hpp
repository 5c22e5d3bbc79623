// Checkpoints of the live state taken during the session's pass, at chunk
// starts: every analyzed pool's used/reserved bytes, segments and live
// blocks. A question about moment t restores the latest checkpoint whose
// earlier events all lie at or before t and replays the file from its chunk
// (TraceReader::read_from), so it reads at most one interval of the file.
// Their memory stays within a budget: past it, every other checkpoint is
// dropped and the interval doubles; a live set too large for the budget on
// its own leaves no checkpoint (replays start at the file's beginning).
#pragma once

#include <cstdint>
#include <vector>

#include "engine.hpp"

namespace memtrail::detail {

struct PoolCheckpoint {
  std::uint32_t pool = 0;
  std::uint64_t used = 0, reserved = 0;
  bool has_segments = false, has_blocks = false;
  std::vector<std::pair<std::uint64_t, SegmentRec>> segments;  // by address
  std::vector<BlockInfo> blocks;                               // unordered
};

struct Checkpoint {
  std::uint64_t chunk_offset = 0;     // replay from this chunk
  std::uint64_t max_time_before = 0;  // latest event time before the chunk
  bool any_event_before = false;
  std::uint64_t events_before = 0;     // events of the file before the chunk
  std::uint64_t last_time_before = 0;  // time of the last of those events
  std::vector<PoolCheckpoint> pools;
  std::size_t bytes() const;
};

class Checkpoints {
 public:
  Checkpoints() = default;
  Checkpoints(std::uint64_t file_bytes, std::size_t budget_bytes);

  // At a chunk start during the pass: takes a checkpoint from `engine` when
  // the interval since the last one has passed.
  void at_chunk(Engine& engine, std::uint64_t offset, bool any_event,
                std::uint64_t max_time_before);
  // The checkpoint to replay from for moment t, or null (from the start).
  const Checkpoint* for_time(std::uint64_t t) const;
  // The checkpoint to replay from for the state after `events` events.
  const Checkpoint* for_position(std::uint64_t events) const;

  std::size_t count() const { return list_.size(); }
  std::size_t bytes() const { return bytes_; }

 private:
  void thin();
  std::vector<Checkpoint> list_;  // by offset
  std::uint64_t interval_ = 0, next_offset_ = 0;
  std::size_t budget_ = 0, bytes_ = 0;
  bool disabled_ = false;
};

}  // namespace memtrail::detail
