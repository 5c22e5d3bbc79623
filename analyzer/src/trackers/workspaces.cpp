// The workspaces section (memtrail/workspaces.hpp): WorkspaceTracker
// (workspaces.cpp) on the pass. It hears every pool and scope record, and
// every event only once the trace has a workspace pool: until then the
// Engine pays one branch per event for it.
#include "engine.hpp"
#include "trackers/trackers.hpp"
#include "workspace_tracker.hpp"

namespace memtrail::detail {
namespace {

class WorkspacesTracker final : public PassTracker, public EngineListener {
 public:
  void attach(Engine& engine) override {
    engine_ = &engine;
    engine.listen(*this, {});
  }

  void on_pool(const PoolInfo& p, bool included) override {
    workspaces_.on_pool(p, included);
    if (workspaces_.active() && !every_event_) {
      every_event_ = true;
      engine_->listen_to_every_event(*this);
    }
  }
  void on_scope(const ScopeInfo& s) override { workspaces_.on_scope(s); }
  void on_event(const Event& e, bool in_range) override { workspaces_.on_event(e, in_range); }

  // The pools and sites are in `a`, not yet grouped: the spill sites' ids
  // are those grouping renumbers.
  void finished(Analysis& a) override { workspaces_.finish(a); }

 private:
  Engine* engine_ = nullptr;
  bool every_event_ = false;
  WorkspaceTracker workspaces_;
};

}  // namespace

std::unique_ptr<PassTracker> make_workspaces_tracker(const AnalysisOptions& /*o*/) {
  return std::make_unique<WorkspacesTracker>();
}

}  // namespace memtrail::detail
