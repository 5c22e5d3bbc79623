// Session::open(): one pass of the Engine over the file with the session's
// taps (series, scopes, ooms), then leaks and indexes, then symbols; every
// stage reports progress and can be cancelled.
#include <malloc.h>
#include <sys/stat.h>

#include <algorithm>

#include "engine.hpp"
#include "group_sites.hpp"
#include "heap_reserved.hpp"
#include "memtrail/session.hpp"
#include "pipelined_read.hpp"
#include "session_errors.hpp"
#include "session_impl.hpp"
#include "symbolize_sites.hpp"

namespace memtrail {

namespace {

// The pass frees far more than the session keeps (per-site states, the
// reader's buffers, symbolization scratch): 40-70 MiB on a trace with 10^5
// stacks. It ran on the loading thread, whose glibc arena keeps those pages:
// the GUI's thread never reuses them, so without this they stay resident.
void give_back_pass_memory() {
  malloc_trim(0);
}

// Merges the sites by their symbolized stacks as analyze() does (unless
// group_by_address), and indexes them by stack: every recorded stack maps
// to its merged site, the first one where a stack has sites in several pools
// (they share their frames).
void group_and_index_sites(detail::SessionState& impl) {
  Analysis& a = impl.whole;
  auto& index = impl.site_of_stack;
  index.reserve(a.sites.size());
  for (std::uint32_t i = 0; i < a.sites.size(); ++i) index.emplace_back(a.sites[i].stack.value, i);
  if (!impl.options.analysis.group_by_address) {
    const std::vector<std::uint32_t> merged = detail::group_sites_by_source(a);
    for (auto& entry : index) entry.second = merged[entry.second];
  }
  std::stable_sort(index.begin(), index.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });
}

// Forwards the trace to the Engine and notes the time span of the file.
class PassVisitor : public TraceVisitor {
 public:
  PassVisitor(detail::Engine& e, detail::Checkpoints& c, detail::SessionTaps& taps)
      : engine_(e), checkpoints_(c), taps_(taps) {}
  void on_chunk(std::uint64_t offset) override {
    checkpoints_.at_chunk(engine_, offset, any_, last_ns_);
  }
  void on_header(const TraceHeader& h) override { engine_.on_header(h); }
  void on_string(std::uint32_t id, std::string_view t) override { engine_.on_string(id, t); }
  void on_module(const ModuleInfo& m) override { engine_.on_module(m); }
  void on_thread(const ThreadInfo& t) override { engine_.on_thread(t); }
  void on_pool(const PoolInfo& p) override { engine_.on_pool(p); }
  void on_stack_node(const StackNode& n) override { engine_.on_stack_node(n); }
  void on_scope(const ScopeInfo& s) override { engine_.on_scope(s); }
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
    engine_.on_events(events, n);
  }
  bool keep_going() override { return engine_.keep_going(); }

  bool any_ = false;
  std::uint64_t first_ns_ = 0, last_ns_ = 0;

 private:
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
  if (!reader.header_error().empty())
    return fail(detail::classify_header_error(reader.header_error()), reader.header_error());
  impl->taps = std::make_unique<detail::SessionTaps>(
      options.series_buckets, options.max_scope_intervals, options.max_oom_events);
  bool stopped = false;
  ReadResult r;
  {
    detail::Engine engine(options.analysis, {});
    engine.set_taps(impl->taps.get());
    impl->checkpoints = detail::Checkpoints(size, options.checkpoint_budget_bytes);
    PassVisitor pass(engine, impl->checkpoints, *impl->taps);
    if (!report(LoadStage::reading, 0, size)) return fail(SessionError::cancelled, cancelled);
    r = detail::read_pipelined(reader, pass, [&](std::uint64_t bytes) {
      stopped = !report(LoadStage::reading, std::min(bytes, size), size);
      return !stopped;
    });
    if (stopped) return fail(SessionError::cancelled, cancelled);
    if (!report(LoadStage::reading, size, size) || !report(LoadStage::finishing, 0, 0))
      return fail(SessionError::cancelled, cancelled);
    Analysis& a = impl->whole;
    a.path = path;
    a.options = options.analysis;
    detail::apply_read_status(a, reader, r, options.analysis.allow_partial);
    if (!a.error.empty())
      return fail(r.ok ? SessionError::truncated : SessionError::corrupt, a.error);
    engine.finish(a);
    if (!a.error.empty()) return fail(SessionError::mark_not_found, a.error);
    a.header = reader.header();
    impl->first_ns = pass.first_ns_;
    impl->last_ns = pass.last_ns_;
  }
  impl->taps->finish();
  index_fragmentation(*impl);
  list_series(*impl);
  for (const PoolStats& p : impl->whole.pools)
    if (p.upstream) {
      if (p.info.id >= impl->upstream.size()) impl->upstream.resize(p.info.id + 1);
      impl->upstream[p.info.id] = true;
    }
  if (!report(LoadStage::finishing, 1, 1)) return fail(SessionError::cancelled, cancelled);

  Analysis& a = impl->whole;
  const std::size_t sites = a.sites.size();
  if (!report(LoadStage::symbolizing, 0, sites)) return fail(SessionError::cancelled, cancelled);
  if (!detail::symbolize_sites(a, options.analysis, [&](std::size_t done) {
        return report(LoadStage::symbolizing, done, sites);
      }))
    return fail(SessionError::cancelled, cancelled);
  group_and_index_sites(*impl);
  // The malloc pool's reserved figures are the glibc samples', as in analyze().
  detail::take_heap_reserved_from_samples(a);
  if (!report(LoadStage::done, sites, sites)) return fail(SessionError::cancelled, cancelled);
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
