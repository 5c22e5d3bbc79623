// The `frames` table of `report --json`: every frame its site objects (top
// lists, scope growth sites) name, once, in the order of first use; a site
// object names its frames by index into it (`frames`) instead of repeating
// them. Repeated inline, they made the JSON grow with sites x lists x depth
// x ~260 bytes: each site in up to five top lists, each frame seven keys on
// lines of their own (python3's 1,320 sites: 53 MB; `--top 0` on a 2.2M-event
// trace: 9.9 GB). Leak sites keep their inline `stack` (DESIGN.md's stable
// keys).
#pragma once

#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "memtrail/analysis.hpp"

namespace memtrail::detail {

class ReportFrames {
 public:
  explicit ReportFrames(const Analysis& a) : a_(a) {}

  // Gives the frames of `site` their table ids (call in document order).
  void add(SiteId site);
  // A site object: its counters and `frames` (ids into the table), or its
  // `stack` inline when its frames are not in the analysis' shared table.
  nlohmann::json site(SiteId site) const;

  std::size_t size() const { return order_.size(); }
  const Frame& frame(std::size_t id) const { return a_.frame_table->frames[order_[id]]; }

 private:
  bool shared(const FrameList& frames) const {
    return a_.frame_table != nullptr && frames.table() == a_.frame_table.get();
  }

  const Analysis& a_;
  std::vector<std::uint32_t> id_of_;  // shared-table index -> table id + 1 (0: not yet)
  std::vector<std::uint32_t> order_;  // table id -> shared-table index
};

}  // namespace memtrail::detail
