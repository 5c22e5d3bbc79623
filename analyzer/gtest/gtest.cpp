// memtrail/gtest.hpp: per-test limits measured by the recorder in this
// process. The writer keeps the heap's live blocks and a window counter
// (tracer/internal/memtrail/detail/heap_window.hpp); stacks of failing sites are
// symbolized by analyzing this process' own trace over the test's window.
#include "memtrail/gtest.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <map>

#include "memtrail/analysis.hpp"
#include "memtrail/check.hpp"
#include "memtrail/detail/heap_window.hpp"
#include "memtrail/detail/live_blocks.hpp"
#include "memtrail/detail/recording.hpp"
#include "memtrail/detail/reentrancy.hpp"
#include "memtrail/detail/runtime_hooks.hpp"
#include "memtrail/detail/session_state.hpp"
#include "memtrail/recorder.hpp"
#include "memtrail/report_text.hpp"
#include "memtrail/size.hpp"

namespace memtrail::gtest {

namespace {

constexpr std::size_t kTopSites = 5;
constexpr std::size_t kFramesPerSite = 8;

// The temporary trace of an in-process run (deleted at exit); empty when the
// trace belongs to `memtrail run` or to the user (MEMTRAIL_OUTPUT set).
std::string& owned_trace() {
  static std::string* path = new std::string;  // never destroyed: used at exit
  return *path;
}

void remove_owned_trace() {
  if (owned_trace().empty()) return;
  memtrail::stop();
  unlink(owned_trace().c_str());
}

// Linked into a test binary without `memtrail run`, libmemtrail_preload.so's
// constructor has already started a trace at the default path in the working
// directory: move it to a temporary file. Runs before main() (this object is
// linked in because the program uses the limits or the listener).
[[gnu::constructor]] void bootstrap_tracing() {
  if (const char* out = std::getenv("MEMTRAIL_OUTPUT"); out && *out) {
    detail::set_track_live_heap(true);
    return;
  }
  if (!detail::recorder_started()) return;
  detail::ScopedInternal internal;
  std::string default_trace = detail::trace_path();
  detail::set_exit_hook(nullptr);  // no exit-time reachability scan: nobody reads it
  memtrail::stop();
  unlink(default_trace.c_str());
  RecorderOptions options = RecorderOptions::from_environment();
  const char* tmp = std::getenv("TMPDIR");
  options.output = std::string(tmp && *tmp ? tmp : "/tmp") + "/memtrail-gtest-%p.mtr";
  options.track_live_heap = true;
  options.sample_interval_ms = 0;
  if (!memtrail::start(options)) return;
  owned_trace() = detail::trace_path();
  std::atexit(remove_owned_trace);
}

std::string bytes_text(std::uint64_t n) {
  return format_size(n) + " (" + std::to_string(n) + (n == 1 ? " byte)" : " bytes)");
}

std::uint64_t parse_limit(std::string_view text, const char* what, bool* ok) {
  std::string why;
  auto n = parse_size(text, &why);
  *ok = n.has_value();
  if (!n) ADD_FAILURE() << "memtrail: " << what << "(\"" << text << "\"): " << why;
  return n.value_or(0);
}

// Starts a measurement window: everything recorded so far is drained first,
// so the window holds exactly the blocks allocated from now on.
std::uint64_t open_window() {
  detail::flush_all_threads();
  return detail::trace_time_ns();
}

bool require_active(const char* what, const char* file, int line) {
  if (active()) return true;
  ADD_FAILURE_AT(file, line) << "memtrail: " << what << " cannot measure: " << why_inactive();
  return false;
}

// Analyzes this process' trace over [since, until] (heap only) for stacks.
Analysis analyze_window(std::uint64_t since, std::uint64_t until) {
  AnalysisOptions options;
  options.from_ns = since;
  options.to_ns = until;
  options.allow_partial = true;  // the trace is still being written
  options.pools = {"malloc"};
  // A temporary trace is deleted at exit: it must not leave TRACE.symbols.
  options.symbol_cache = owned_trace().empty();
  return analyze(detail::trace_path(), options);
}

const FrameList* frames_of(const Analysis& a, StackId stack) {
  for (const Site& s : a.sites)
    if (s.stack == stack) return &s.frames;
  return nullptr;
}

// Sites with `limit` bytes or more allocated in the window and still live;
// empty when none.
std::string leak_report(std::uint64_t since, std::uint64_t limit) {
  detail::flush_all_threads();
  std::uint64_t until = detail::trace_time_ns();
  struct Group {
    std::uint64_t bytes = 0, blocks = 0;
  };
  std::map<std::uint32_t, Group> by_stack;
  for (const detail::LiveBlock& b : detail::live_blocks()) {
    if (b.time_ns < since) continue;
    Group& g = by_stack[b.stack];
    g.bytes += b.size;
    g.blocks += 1;
  }
  std::vector<std::pair<std::uint32_t, Group>> failing;
  for (const auto& [stack, g] : by_stack)
    if (g.bytes >= limit) failing.emplace_back(stack, g);
  if (failing.empty()) return {};
  std::sort(failing.begin(), failing.end(),
            [](const auto& x, const auto& y) { return x.second.bytes > y.second.bytes; });

  Analysis a = analyze_window(since, until);
  std::string out = "List of leaked allocations:\n";
  std::size_t shown = 0;
  for (const auto& [stack, g] : failing) {
    if (shown++ == kTopSites) {
      out += "  ... " + std::to_string(failing.size() - kTopSites) + " more sites\n";
      break;
    }
    out += "  " + bytes_text(g.bytes) + " in " + std::to_string(g.blocks) +
           (g.blocks == 1 ? " block" : " blocks") + " allocated from:\n";
    const FrameList* frames = frames_of(a, StackId{stack});
    out += frames ? format_stack(*frames, kFramesPerSite, "    ", StackStyle::numbered)
                  : "    (stack " + std::to_string(stack) + " not found in the trace)\n";
  }
  return out;
}

}  // namespace

bool active() {
  return detail::recorder_started();
}

std::string why_inactive() {
  if (active()) return {};
  return "the memtrail recorder is not running in this process (link the memtrail::gtest "
         "target, which loads libmemtrail_preload.so, or run the test under 'memtrail run')";
}

// ---------------------------------------------------------------- MemoryLimit

MemoryLimit::MemoryLimit(std::string_view limit, const char* file, int line)
    : file_(file), line_(line) {
  detail::ScopedInternal internal;
  bool ok = false;
  limit_ = parse_limit(limit, "MEMTRAIL_LIMIT_MEMORY", &ok);
  if (!ok || !require_active("MEMTRAIL_LIMIT_MEMORY", file, line)) return;
  since_ns_ = open_window();
  detail::reset_heap_window(since_ns_);
  armed_ = true;
}

MemoryLimit::~MemoryLimit() {
  if (!armed_) return;
  detail::ScopedInternal internal;
  detail::flush_all_threads();
  detail::HeapWindow w = detail::heap_window();
  if (w.since_ns != since_ns_) {
    ADD_FAILURE_AT(file_, line_) << "memtrail: another MEMTRAIL_LIMIT_MEMORY overlapped this one";
    return;
  }
  if (w.peak_bytes < limit_) return;  // strict, as memray: at the limit fails
  std::uint64_t until = detail::trace_time_ns();
  Analysis a = analyze_window(since_ns_, until);
  std::string sites = "List of allocations at the peak:\n";
  std::size_t shown = 0;
  for (SiteId i : top_sites(a, SiteOrder::peak, 0)) {
    const Site& s = at(a.sites, i);
    if (s.calls == 0) continue;  // live before the test: not the test's memory
    if (shown++ == kTopSites) break;
    sites += "  " + bytes_text(s.peak_bytes) + " allocated from:\n" +
             format_stack(s.frames, kFramesPerSite, "    ", StackStyle::numbered);
  }
  ADD_FAILURE_AT(file_, line_) << "Test was limited to " << bytes_text(limit_) << " but allocated "
                               << bytes_text(w.peak_bytes) << " at its peak\n"
                               << sites;
}

// ---------------------------------------------------------------- LeakLimit

LeakLimit::LeakLimit(std::string_view limit, const char* file, int line)
    : file_(file), line_(line) {
  detail::ScopedInternal internal;
  bool ok = false;
  limit_ = parse_limit(limit, "MEMTRAIL_LIMIT_LEAKS", &ok);
  if (!ok || !require_active("MEMTRAIL_LIMIT_LEAKS", file, line)) return;
  since_ns_ = open_window();
  armed_ = true;
}

LeakLimit::~LeakLimit() {
  if (!armed_) return;
  detail::ScopedInternal internal;
  std::string report = leak_report(since_ns_, limit_);
  if (report.empty()) return;
  ADD_FAILURE_AT(file_, line_) << "Test was allowed to leak " << bytes_text(limit_)
                               << " per location but at least one location leaked more\n"
                               << report;
}

// ---------------------------------------------------------------- listener

LeakCheckListener::LeakCheckListener(std::string_view per_site_limit) {
  detail::ScopedInternal internal;
  std::string why;
  auto n = parse_size(per_site_limit, &why);
  limit_ = n.value_or(1);
  if (!n)
    std::fprintf(stderr, "memtrail: LeakCheckListener(\"%.*s\"): %s; using 1 byte\n",
                 static_cast<int>(per_site_limit.size()), per_site_limit.data(), why.c_str());
}

void LeakCheckListener::OnTestStart(const ::testing::TestInfo&) {
  detail::ScopedInternal internal;
  armed_ = active();
  if (armed_) since_ns_ = open_window();
}

void LeakCheckListener::OnTestEnd(const ::testing::TestInfo& test) {
  if (!armed_) return;
  detail::ScopedInternal internal;
  std::string report = leak_report(since_ns_, limit_);
  if (report.empty()) return;
  ADD_FAILURE_AT(test.file(), test.line())
      << "memtrail: test leaked " << bytes_text(limit_) << " or more per location\n"
      << report;
}

}  // namespace memtrail::gtest
