// How the run ended and what the trace is short of, from the recorder's own
// marks: `memtrail attach` (blocks from before are unknown), the events it
// could not record (summed by reason) and the signal that ended the
// process. The report's header and leak verdict, the JSON's `trace`, check's
// lost-events gate.
#include <algorithm>

#include "engine.hpp"
#include "trackers/trackers.hpp"

namespace memtrail::detail {
namespace {

class RunEndTracker final : public PassTracker, public EngineListener {
 public:
  void attach(Engine& engine) override {
    engine_ = &engine;
    engine.listen(*this, {EventKind::mark});
  }

  void on_event(const Event& e, bool /*in_range*/) override {
    switch (static_cast<MarkDetail>(e.detail)) {
      case MarkDetail::attach:
        attached_ = true;
        break;
      case MarkDetail::lost:
        note_lost(e);
        break;
      case MarkDetail::signal:
        signal_ = static_cast<int>(std::min<std::uint64_t>(e.size, 1024));
        signal_name_ = engine_->string_of(e.aux);
        if (signal_name_.empty()) signal_name_ = "signal " + std::to_string(signal_);
        break;
      default:
        break;
    }
  }

  void finished(Analysis& a) override {
    a.attached = attached_;
    a.lost_events = std::move(lost_);
    a.ended_by_signal = signal_;
    a.ended_by_signal_name = std::move(signal_name_);
  }

 private:
  void note_lost(const Event& e) {
    auto reason = static_cast<LostReason>(e.requested <= 255 ? e.requested : 0);
    std::string words = engine_->string_of(e.aux);
    for (LostEvents& l : lost_)
      if (l.reason == reason && l.words == words) {
        l.count += e.size;
        return;
      }
    lost_.push_back(LostEvents{reason, std::move(words), e.size});
  }

  Engine* engine_ = nullptr;  // during the read: the marks' texts
  bool attached_ = false;
  std::vector<LostEvents> lost_;
  int signal_ = 0;
  std::string signal_name_;
};

}  // namespace

std::unique_ptr<PassTracker> make_run_end_tracker(const AnalysisOptions& /*o*/) {
  return std::make_unique<RunEndTracker>();
}

}  // namespace memtrail::detail
