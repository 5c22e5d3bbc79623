// The failed allocations (EventKind::oom) of the range, counted per pool
// (PoolStats::ooms: the report's pools, the JSON). The Session lists each
// oom with its pool's state apart (SessionTaps::oom, the GUI's markers).
#include "engine.hpp"
#include "trackers/trackers.hpp"

namespace memtrail::detail {
namespace {

class OomsTracker final : public PassTracker, public EngineListener {
 public:
  void attach(Engine& engine) override { engine.listen(*this, {EventKind::oom}); }

  void on_event(const Event& e, bool in_range) override {
    if (!in_range) return;
    // The Engine's slot of the pool: PoolStats::info.id is that slot's.
    const std::uint32_t slot = Engine::pool_slot(e.pool);
    if (slot >= per_pool_.size()) per_pool_.resize(slot + 1, 0);
    ++per_pool_[slot];
  }

  void finished(Analysis& a) override {
    for (PoolStats& p : a.pools)
      if (p.info.id < per_pool_.size()) p.ooms = per_pool_[p.info.id];
  }

 private:
  std::vector<std::uint64_t> per_pool_;  // by pool id
};

}  // namespace

std::unique_ptr<PassTracker> make_ooms_tracker(const AnalysisOptions& /*o*/) {
  return std::make_unique<OomsTracker>();
}

}  // namespace memtrail::detail
