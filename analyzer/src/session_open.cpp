// Session::open(): the analysis pass (analysis_pass.hpp) with the session's
// tracker (taps for series, scopes, ooms; checkpoints; the site index);
// every stage reports progress and can be cancelled.
#include <malloc.h>
#include <sys/stat.h>

#include <algorithm>
#include <optional>

#include "analysis_pass.hpp"
#include "engine.hpp"
#include "memtrail/session.hpp"
#include "session_errors.hpp"
#include "session_impl.hpp"

namespace memtrail {

namespace {

// The pass frees far more than the session keeps (per-site states, the
// reader's buffers, symbolization scratch): 40-70 MiB on a trace with 10^5
// stacks. It ran on the loading thread, whose glibc arena keeps those pages:
// the GUI's thread never reuses them, so without this they stay resident.
void give_back_pass_memory() {
  malloc_trim(0);
}

// Notes the time span of the file and takes the checkpoints at chunk starts
// on the way to the Engine (`next`).
class PassVisitor : public TraceVisitor {
 public:
  PassVisitor(TraceVisitor& next, detail::Engine& e, detail::Checkpoints& c,
              detail::SessionTaps& taps)
      : next_(next), engine_(e), checkpoints_(c), taps_(taps) {}
  void on_chunk(std::uint64_t offset) override {
    checkpoints_.at_chunk(engine_, offset, any_, last_ns_);
    next_.on_chunk(offset);
  }
  void on_header(const TraceHeader& h) override { next_.on_header(h); }
  void on_string(std::uint32_t id, std::string_view t) override { next_.on_string(id, t); }
  void on_module(const ModuleInfo& m) override { next_.on_module(m); }
  void on_thread(const ThreadInfo& t) override { next_.on_thread(t); }
  void on_pool(const PoolInfo& p) override { next_.on_pool(p); }
  void on_stack_node(const StackNode& n) override { next_.on_stack_node(n); }
  void on_scope(const ScopeInfo& s) override { next_.on_scope(s); }
  void on_event(const Event& e) override { on_events(&e, 1); }
  void on_events(const Event* events, std::size_t n) override {
    if (n == 0) return;
    // Threads' buffers interleave, so a batch need not start with its
    // earliest event nor end with its latest: look at every one.
    std::uint64_t lo = events[0].time_ns, hi = events[0].time_ns;
    for (std::size_t i = 1; i < n; ++i) {
      lo = std::min(lo, events[i].time_ns);
      hi = std::max(hi, events[i].time_ns);
    }
    if (!any_) {
      first_ns_ = lo;
      last_ns_ = hi;
      taps_.blocks_.start(first_ns_);
    }
    any_ = true;
    first_ns_ = std::min(first_ns_, lo);
    last_ns_ = std::max(last_ns_, hi);
    next_.on_events(events, n);
  }
  bool keep_going() override { return next_.keep_going(); }

  bool any_ = false;
  std::uint64_t first_ns_ = 0, last_ns_ = 0;

 private:
  TraceVisitor& next_;
  detail::Engine& engine_;
  detail::Checkpoints& checkpoints_;
  detail::SessionTaps& taps_;
};

OpenResult fail(SessionError e, std::string message) {
  OpenResult r;
  r.error = e;
  r.message = std::move(message);
  return r;
}

// Series of the trace, in the order a legend lists them.
void list_series(detail::SessionState& s) {
  for (const PoolStats& p : s.whole.pools) {
    std::uint32_t id = p.info.id;
    if (id < s.taps->used_.size() && !s.taps->used_[id].empty())
      s.series.push_back({{SeriesKind::pool_used, PoolId{id}}, p.info.name + " used"});
    if (id < s.taps->reserved_.size() && !s.taps->reserved_[id].empty())
      s.series.push_back({{SeriesKind::pool_reserved, PoolId{id}}, p.info.name + " reserved"});
    if (id < s.fragmentation.size() && !s.fragmentation[id].empty())
      s.series.push_back({{SeriesKind::pool_external_fragmentation, PoolId{id}},
                          p.info.name + " external fragmentation"});
  }
  s.series.push_back({{SeriesKind::process_used, {}}, "process used"});
  if (!s.taps->samples_[0].empty()) {
    s.series.push_back({{SeriesKind::rss, {}}, "rss"});
    s.series.push_back({{SeriesKind::heap_used, {}}, "heap used"});
    s.series.push_back({{SeriesKind::heap_reserved, {}}, "heap reserved"});
    if (s.taps->any_device_free_)
      s.series.push_back({{SeriesKind::device_free, {}}, "device free"});
  }
}

// The Engine samples fragmentation once per timeline bucket of the range;
// those samples and the state at the end become the series (in millionths).
void index_fragmentation(detail::SessionState& s) {
  for (const PoolStats& p : s.whole.pools) {
    if (p.fragmentation.empty()) continue;
    if (p.info.id >= s.fragmentation.size())
      s.fragmentation.resize(p.info.id + 1, detail::SeriesTrack(s.options.series_buckets));
    detail::SeriesTrack& t = s.fragmentation[p.info.id];
    for (const Fragmentation& f : p.fragmentation)
      t.record(f.time_ns, static_cast<std::uint64_t>(f.external * 1e6 + 0.5));
    // The state at the end of the trace: else the chart holds the pool's last
    // sample to the end while a segment map there says otherwise.
    const Fragmentation& end = p.final_fragmentation;
    if (end.time_ns > p.fragmentation.back().time_ns)
      t.record(end.time_ns, static_cast<std::uint64_t>(end.external * 1e6 + 0.5));
    t.finish();
  }
}

// The Session's part of the analysis pass: the taps on the Engine, the
// checkpoints and the file's time span during the read; the series and the
// upstream pools once the pass is finished; the index of sites by stack.
class SessionTracker final : public detail::PassTracker {
 public:
  explicit SessionTracker(detail::SessionState& s) : s_(s) {}

  void attach(detail::Engine& engine) override {
    engine_ = &engine;
    engine.set_taps(s_.taps.get());
  }
  TraceVisitor& wrap(TraceVisitor& next) override {
    return visitor_.emplace(next, *engine_, s_.checkpoints, *s_.taps);
  }
  void finished(Analysis& a) override {
    s_.first_ns = visitor_->first_ns_;
    s_.last_ns = visitor_->last_ns_;
    visitor_.reset();
    s_.taps->finish();
    index_fragmentation(s_);
    list_series(s_);
    for (const PoolStats& p : a.pools)
      if (p.upstream) {
        if (p.info.id >= s_.upstream.size()) s_.upstream.resize(p.info.id + 1);
        s_.upstream[p.info.id] = true;
      }
  }
  // Every recorded stack maps to its site...
  void symbolized(const Analysis& a) override {
    auto& index = s_.site_of_stack;
    index.reserve(a.sites.size());
    for (std::uint32_t i = 0; i < a.sites.size(); ++i)
      index.emplace_back(a.sites[i].stack.value, i);
  }
  // ...its merged site once grouped, the first one where a stack has sites in
  // several pools (they share their frames).
  void grouped(const Analysis&, const std::vector<std::uint32_t>* merged) override {
    auto& index = s_.site_of_stack;
    if (merged)
      for (auto& entry : index) entry.second = (*merged)[entry.second];
    std::stable_sort(index.begin(), index.end(),
                     [](const auto& x, const auto& y) { return x.first < y.first; });
  }

 private:
  detail::SessionState& s_;
  detail::Engine* engine_ = nullptr;
  std::optional<PassVisitor> visitor_;
};

SessionError session_error(detail::PassFailure f, const std::string& header_error) {
  switch (f) {
    case detail::PassFailure::header:
      return detail::classify_header_error(header_error);
    case detail::PassFailure::truncated:
      return SessionError::truncated;
    case detail::PassFailure::corrupt:
      return SessionError::corrupt;
    case detail::PassFailure::mark_not_found:
      return SessionError::mark_not_found;
    case detail::PassFailure::cancelled:
      return SessionError::cancelled;
    case detail::PassFailure::none:
      break;
  }
  return SessionError::none;
}

}  // namespace

OpenResult Session::open(const std::string& path, const SessionOptions& options,
                         const LoadProgressFn& progress) {
  auto impl = std::make_unique<Impl>();
  impl->path = path;
  impl->options = options;
  LoadProgress lp;
  auto report = [&](LoadStage stage, std::uint64_t done, std::uint64_t total) {
    lp = LoadProgress{stage, done, total};
    return !progress || progress(lp);
  };
  const std::string cancelled = path + ": cancelled";
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    impl->file_bytes = static_cast<std::uint64_t>(st.st_size);
    impl->mtime = st.st_mtim;
  }
  const std::uint64_t size = impl->file_bytes;
  if (!report(LoadStage::opening, 0, size)) return fail(SessionError::cancelled, cancelled);

  TraceReader reader(path);
  impl->taps = std::make_unique<detail::SessionTaps>(
      options.series_buckets, options.max_scope_intervals, options.max_oom_events);
  impl->checkpoints = detail::Checkpoints(size, options.checkpoint_budget_bytes);
  SessionTracker tracker(*impl);
  detail::PassOptions pass;
  pass.analysis = options.analysis;
  pass.file_bytes = size;
  pass.stop_on_error = true;
  pass.progress = [&](LoadStage stage, std::uint64_t done, std::uint64_t total) {
    return report(stage, done, total);
  };
  pass.trackers.push_back(&tracker);
  Analysis& a = impl->whole;
  const detail::PassFailure failure = detail::run_analysis_pass(reader, path, pass, a);
  if (failure == detail::PassFailure::cancelled) return fail(SessionError::cancelled, cancelled);
  if (failure != detail::PassFailure::none)
    return fail(session_error(failure, reader.header_error()), a.error);
  give_back_pass_memory();

  OpenResult out;
  out.warning = a.warning;
  out.session = std::shared_ptr<const Session>(new Session(std::move(impl)));
  return out;
}

Session::Session(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Session::~Session() = default;

const std::string& Session::path() const {
  return impl_->path;
}
std::uint64_t Session::file_bytes() const {
  return impl_->file_bytes;
}
const Analysis& Session::whole() const {
  return impl_->whole;
}
const std::vector<OomEvent>& Session::ooms() const {
  return impl_->taps->ooms_;
}

}  // namespace memtrail
