// The user's marks (memtrail_mark, iteration bounds, attach and exec marks),
// the whole trace's, up to AnalysisOptions::max_marks (Analysis::marks: the
// GUI's timeline, the exports). The recorder's own marks of a loss or of the
// ending signal are the run's end (run_end.cpp), not marks.
#include "engine.hpp"
#include "trackers/trackers.hpp"

namespace memtrail::detail {
namespace {

class MarksTracker final : public PassTracker, public EngineListener {
 public:
  explicit MarksTracker(const AnalysisOptions& o) : max_(o.max_marks) {}

  void attach(Engine& engine) override {
    engine_ = &engine;
    engine.listen(*this, {EventKind::mark});
  }

  void on_event(const Event& e, bool /*in_range*/) override {
    const auto detail = static_cast<MarkDetail>(e.detail);
    if (detail == MarkDetail::lost || detail == MarkDetail::signal) return;
    if (marks_.size() < max_)
      marks_.push_back(Mark{e.time_ns, e.thread, engine_->string_of(e.aux)});
  }

  void finished(Analysis& a) override { a.marks = std::move(marks_); }

 private:
  std::size_t max_;
  Engine* engine_ = nullptr;  // during the read: the mark texts
  std::vector<Mark> marks_;
};

}  // namespace

std::unique_ptr<PassTracker> make_marks_tracker(const AnalysisOptions& o) {
  return std::make_unique<MarksTracker>(o);
}

}  // namespace memtrail::detail
