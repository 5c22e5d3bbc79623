// The workspace resets and spills (with their bytes) of the range, counted
// per scope, the workspace's scope the event names (ScopeStats:
// workspace_resets, spills, spilled_bytes; the report's SCOPES, the JSON).
#include <map>

#include "engine.hpp"
#include "trackers/trackers.hpp"

namespace memtrail::detail {
namespace {

class ScopeSpillsTracker final : public PassTracker, public EngineListener {
 public:
  void attach(Engine& engine) override {
    engine.listen(*this, {EventKind::workspace_reset, EventKind::spill});
  }

  void on_event(const Event& e, bool in_range) override {
    if (!in_range) return;
    Counts& c = per_scope_[Engine::scope_slot(e.aux)];
    if (e.kind == EventKind::workspace_reset) {
      ++c.resets;
    } else {
      ++c.spills;
      c.spilled_bytes += e.size;
    }
  }

  // By the scope's slot in the Engine. Slot 0 is no scope the Engine shows:
  // a ScopeStats of id 0 is the iteration scope of marks, which has none.
  void finished(Analysis& a) override {
    for (ScopeStats& s : a.scopes) {
      if (s.info.id == 0) continue;
      auto it = per_scope_.find(Engine::scope_slot(s.info.id));
      if (it == per_scope_.end()) continue;
      s.workspace_resets = it->second.resets;
      s.spills = it->second.spills;
      s.spilled_bytes = it->second.spilled_bytes;
    }
  }

 private:
  struct Counts {
    std::uint64_t resets = 0, spills = 0, spilled_bytes = 0;
  };
  std::map<std::uint32_t, Counts> per_scope_;  // few: the workspaces' scopes
};

}  // namespace

std::unique_ptr<PassTracker> make_scope_spills_tracker(const AnalysisOptions& /*o*/) {
  return std::make_unique<ScopeSpillsTracker>();
}

}  // namespace memtrail::detail
