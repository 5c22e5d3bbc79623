// The process samples (EventKind::sample) of the range: how many, the peak
// RSS among them, and the rss / heap used / heap reserved / device free
// series (Analysis::samples; heap_reserved.cpp takes the malloc pool's
// reserved bytes from them after the pass).
#include <algorithm>

#include "decimator.hpp"
#include "engine.hpp"
#include "trackers/trackers.hpp"

namespace memtrail::detail {
namespace {

class SamplesTracker final : public PassTracker, public EngineListener {
 public:
  explicit SamplesTracker(const AnalysisOptions& o) : series_(4, o.timeline_points) {}

  void attach(Engine& engine) override { engine.listen(*this, {EventKind::sample}); }

  void on_event(const Event& e, bool in_range) override {
    if (!in_range) return;
    ++count_;
    peak_rss_ = std::max(peak_rss_, sample_rss(e));
    std::uint64_t v[4] = {sample_rss(e), sample_heap_used(e), sample_heap_reserved(e),
                          sample_device_free(e)};
    series_.record(e.time_ns, v);
  }

  void finished(Analysis& a) override {
    a.summary.samples = count_;
    a.summary.peak_rss_bytes = peak_rss_;
    a.samples.rss = series_.series(0);
    a.samples.heap_used = series_.series(1);
    a.samples.heap_reserved = series_.series(2);
    a.samples.device_free = series_.series(3);
  }

 private:
  Decimator series_;
  std::uint64_t count_ = 0, peak_rss_ = 0;
};

}  // namespace

std::unique_ptr<PassTracker> make_samples_tracker(const AnalysisOptions& o) {
  return std::make_unique<SamplesTracker>(o);
}

}  // namespace memtrail::detail
