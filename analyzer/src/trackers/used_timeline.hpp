// The process-wide used bytes (the leaf pools') over the range, decimated to
// AnalysisOptions::timeline_points (Analysis::used: the report's chart, the
// JSON's timeline.used, the Chrome export's counter, the GUI's timeline).
#pragma once

#include "decimator.hpp"
#include "trackers/block_tracker.hpp"

namespace memtrail::detail {

class UsedTimelineTracker : public BlockTracker {
 public:
  explicit UsedTimelineTracker(const AnalysisOptions& o) : used_(1, o.timeline_points) {}

  [[gnu::always_inline]] void on_process_used(std::uint64_t t, std::uint64_t used) {
    used_.record_n<1>(t, &used);
  }
  void finish(Analysis& a) { a.used = used_.series(0); }

 private:
  Decimator used_;
};

}  // namespace memtrail::detail
