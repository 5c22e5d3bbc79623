// The list of the pass's own trackers (trackers.hpp).
#include "trackers/trackers.hpp"

namespace memtrail::detail {

std::vector<std::unique_ptr<PassTracker>> standard_trackers(const AnalysisOptions& o) {
  std::vector<std::unique_ptr<PassTracker>> all;
  all.push_back(make_samples_tracker(o));
  all.push_back(make_marks_tracker(o));
  all.push_back(make_run_end_tracker(o));
  all.push_back(make_workspaces_tracker(o));
  all.push_back(make_ooms_tracker(o));
  all.push_back(make_scope_spills_tracker(o));
  return all;
}

}  // namespace memtrail::detail
