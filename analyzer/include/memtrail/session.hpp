// memtrail analyzer session: open a trace once, then ask it questions without
// re-reading it. The GUI and the CLI share it (the model: Tracy's UI-free
// Worker with its LoadProgress, heaptrack's staged results).
//
//   memtrail::SessionOptions opt;
//   memtrail::OpenResult r = memtrail::Session::open("run.mtr", opt, progress);
//   if (!r.session) { fputs(r.message.c_str(), stderr); return 2; }
//   const memtrail::Analysis& a = r.session->whole();
//   memtrail::Envelope e = r.session->series({SeriesKind::pool_used, PoolId{1}}, t0, t1, 800);
//   memtrail::SegmentMap m = r.session->segment_map(pool, t);
//
// What open() builds in its one pass over the file, beside the whole-trace
// Analysis: a multi-resolution min/max index of every time series (zooming
// never re-reads the trace), checkpoints of the live blocks of every pool
// with segments (a segment map at any moment replays at most one checkpoint
// interval), scope intervals and OOM events. Memory is bounded by the live
// set, the sites and stacks, and fixed budgets (SessionOptions), never by the
// number of events.
//
// Thread safety: every const member may be called from any thread at the same
// time as any other (queries that read the file or symbolize take an internal
// lock). A Session is never modified after open() returns.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "memtrail/analysis.hpp"
#include "memtrail/site_charts.hpp"

namespace memtrail {

// ---------------------------------------------------------------- loading

enum class LoadStage : std::uint8_t {
  opening,      // header and file size
  reading,      // the pass over the events (progress in bytes of the file)
  finishing,    // leaks, range end, indexes
  symbolizing,  // sites' frames (progress in sites)
  done,
};
const char* stage_name(LoadStage s);  // "reading events", ...

struct LoadProgress {
  LoadStage stage = LoadStage::opening;
  std::uint64_t done = 0;   // bytes of the file read (reading), sites (symbolizing)
  std::uint64_t total = 0;  // file size in bytes (known up front), number of sites
};
// Called once per chunk of the file read (a chunk is ~1 MiB of events before
// compression, ~100-300 KiB of file: steps never exceed one chunk's stored
// size) and at each stage change, from the loading thread. Return false to cancel: open() then
// fails with SessionError::cancelled within ~50 ms, whatever the stage.
using LoadProgressFn = std::function<bool(const LoadProgress&)>;

enum class SessionError : std::uint8_t {
  none,
  cannot_open,          // missing file, no permission, a directory
  not_a_trace,          // bad magic, too short for a header
  unsupported_version,  // a newer or older format
  corrupt,              // checksum or decoding error in a chunk
  truncated,            // cut file and allow_partial not set
  mark_not_found,       // from_mark / to_mark never occur
  cancelled,
};
const char* error_name(SessionError e);  // "corrupt", ...

struct SessionOptions {
  AnalysisOptions analysis;  // range, pools, symbols, allow_partial, ...
  // Finest resolution of the series index: at most this many buckets per
  // series at level 0 (each level above halves it).
  std::size_t series_buckets = 1 << 16;
  // Memory for live-block checkpoints of pools with segments, all together.
  std::size_t checkpoint_budget_bytes = std::size_t{32} << 20;
  std::size_t max_scope_intervals = 200000;  // the most recent are kept past this
  std::size_t max_oom_events = 10000;
};

class Session;

struct OpenResult {
  std::shared_ptr<const Session> session;  // null on error
  SessionError error = SessionError::none;
  std::string message;  // the reader's one-line error; empty on success
  std::string warning;  // one line (dropped bytes, no end marker); may be set on success
};

// ---------------------------------------------------------------- answers

enum class SeriesKind : std::uint8_t {
  pool_used,                    // SeriesId::pool = pool id
  pool_reserved,                // SeriesId::pool = pool id
  pool_external_fragmentation,  // 1 - largest free / free, in millionths (pools with segments)
  process_used,                 // leaf pools together (Analysis::used)
  rss,                          // from sample events
  heap_used,                    // glibc heap in use, from sample events
  heap_reserved,                // glibc heap reserved (arenas + mmapped chunks), from sample events
  device_free,                  // from sample events
};

struct SeriesId {
  SeriesKind kind = SeriesKind::process_used;
  PoolId pool{};  // pool_used, pool_reserved, pool_external_fragmentation
  bool operator==(const SeriesId&) const = default;
};

struct SeriesInfo {
  SeriesId id;
  std::string name;  // "malloc used", "rss", ...
};

// Min/max envelope of a series over [t0, t1] in `points` equal buckets:
// bucket i covers [time_ns[i], time_ns[i] + step_ns). min/max are exact over
// the events in the bucket at the index's resolution (a bucket narrower than
// the finest level carries the value of the finest bucket that holds it);
// `has_data[i]` false where the series has no value yet (before its first
// event). `last` is the value at t1.
struct Envelope {
  std::uint64_t t0 = 0, t1 = 0, step_ns = 0;
  std::vector<std::uint64_t> time_ns, min, max;
  std::vector<std::uint8_t> has_data;
  std::uint64_t last = 0;
  std::uint64_t max_of_all = 0;  // max over the range (axis scaling)
};

// The state of one span of a segment at a moment.
enum class SpanState : std::uint8_t {
  allocated,       // a live block
  inactive_split,  // free bytes in a segment that also holds live blocks (fragmentation)
  cached_free,     // a segment with no live block: free and releasable
};

struct SegmentSpan {
  std::uint64_t address = 0, size = 0;
  SpanState state = SpanState::allocated;
  StackId stack{};             // allocated spans only
  std::uint32_t thread = 0;    // allocated spans only
  std::uint64_t alloc_ns = 0;  // allocated spans only
};

// A segment of SegmentMap cut into spans by state, in address order.
std::vector<SegmentSpan> segment_spans(const SegmentInfo& segment);

// Reserved bytes of one pool at a moment, split as the summary pie shows it.
struct PoolBreakdown {
  PoolId pool{};
  std::string name;
  MemorySpace space = MemorySpace::host;
  std::int32_t device = -1;
  std::uint64_t reserved = 0;
  std::uint64_t used = 0;
  std::uint64_t cached_free = 0;  // free bytes in segments holding no live block
  std::uint64_t fragmented = 0;   // free bytes in segments holding live blocks
  // Reserved is known from segments (a pool of the allocator stack) or, for
  // the process heap, from glibc's counters in the samples; otherwise it
  // equals used and the two free figures are 0.
  enum class Source : std::uint8_t { segments, heap_samples, none } source = Source::none;
};

struct ScopeInterval {
  std::uint32_t scope = 0;  // ScopeInfo id (Analysis::scopes[i].info.id)
  std::uint32_t thread = 0;
  std::uint64_t begin_ns = 0, end_ns = kTimeMax;  // kTimeMax: still open at the end
  std::uint32_t depth = 0;                        // nesting on its thread, 0 = outermost
  std::uint64_t entry = 0;  // 1 for the scope's first entry in the trace (all threads), 2, ...
};

struct OomEvent {
  std::uint64_t time_ns = 0;
  PoolId pool{};
  std::uint32_t thread = 0;
  StackId stack{};
  std::uint64_t requested = 0;
  std::string message;  // the pool state text recorded with the event
};

// Why an allocation of `requested` bytes could not (or could) be served at a
// moment: per pool with segments, the largest free span beside the request,
// and for each segment that is partly used, the live blocks that pin it.
struct OomExplanation {
  std::uint64_t time_ns = 0;
  std::uint64_t requested = 0;  // 0 when asked at a moment with no oom event
  struct PinnedSegment {
    SegmentInfo segment;  // blocks = the live blocks that pin it
    std::uint64_t free_bytes = 0, largest_free = 0;
  };
  struct PoolPart {
    PoolId pool{};
    std::string name;
    std::uint64_t reserved = 0, used = 0, free = 0, largest_free = 0;
    bool request_fits = false;          // largest_free >= requested
    std::vector<PinnedSegment> pinned;  // by free bytes, descending
  };
  std::vector<PoolPart> pools;
  std::string error;  // one line; empty on success
};

// ---------------------------------------------------------------- session

class Session {
 public:
  // One pass over the trace (the whole file; options.analysis.from/to only
  // shape whole()). Never throws on bad input.
  static OpenResult open(const std::string& path, const SessionOptions& options = {},
                         const LoadProgressFn& progress = {});

  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  const std::string& path() const;
  std::uint64_t file_bytes() const;
  // The whole trace (or the range of options.analysis), symbolized.
  const Analysis& whole() const;

  // Every series the trace has (pools' used/reserved, external
  // fragmentation for pools with segments, process used; rss, heap and
  // device series when the trace has samples).
  std::vector<SeriesInfo> series_list() const;
  // Served from the index: no file access. t1 < t0 or points == 0 gives an
  // empty Envelope; times are clamped to the trace.
  Envelope series(SeriesId id, std::uint64_t t0, std::uint64_t t1, std::size_t points) const;

  // Segments and live blocks of `pool` just after the last event at or
  // before time_ns: the nearest checkpoint plus a replay of the file from
  // it. error is set for an unknown pool or a file that changed.
  SegmentMap segment_map(PoolId pool, std::uint64_t time_ns) const;
  // Reserved / used / cached free / fragmented per analyzed pool at a moment.
  std::vector<PoolBreakdown> breakdown(std::uint64_t time_ns) const;
  // The same two at an event position: the state just after the file's first
  // `events` events, exact where several events share a timestamp (the peak:
  // Summary::peak_position). Their time is that of the last of those events.
  SegmentMap segment_map_at_position(PoolId pool, std::uint64_t events) const;
  std::vector<PoolBreakdown> breakdown_at_position(std::uint64_t events) const;
  OomExplanation explain(std::uint64_t time_ns, std::uint64_t requested = 0) const;
  const std::vector<OomEvent>& ooms() const;

  // The `n` largest blocks (any pool; leaf pools first when sizes tie) whose
  // lifetime overlaps [t0, t1], sorted by alloc time. Sites index whole().sites.
  // The pass keeps, for each of 256 time slices (from the first event; the
  // width a power of two of ns, ~duration / 256 to / 128), the 64 largest
  // blocks of any size overlapping it, beside whole().large_blocks. So for
  // n <= 64 the answer is exact whenever each of the true n largest overlaps
  // a slice lying wholly inside [t0, t1] (always when t0 and t1 are slice
  // boundaries); blocks seen only in the partial slices at the ends are the
  // largest kept there.
  std::vector<BlockLifetime> largest_blocks(std::uint64_t t0, std::uint64_t t1,
                                            std::size_t n) const;
  // Scope entries overlapping [t0, t1], by begin time, at most `max`.
  std::vector<ScopeInterval> scope_intervals(std::uint64_t t0, std::uint64_t t1,
                                             std::size_t max) const;

  // Sites, leaks, summary, pools of [t0, t1] only (AnalysisOptions from/to),
  // symbolized from the session's cache. Reads the file again (from the
  // nearest checkpoint when it can); cancellable through `progress`.
  std::shared_ptr<const Analysis> analyze_range(std::uint64_t t0, std::uint64_t t1,
                                                const LoadProgressFn& progress = {}) const;

  // Per-site charts over time for the top sites of `sites` (whole() or an
  // analyze_range() of this session): a second pass over the file
  // (memtrail/site_charts.hpp); cancellable through `progress`.
  SiteCharts site_charts(const SiteChartRequest& request, const Analysis& sites,
                         const LoadProgressFn& progress = {}) const;

  // Symbolized frames of a stack id, innermost first (cached).
  std::vector<Frame> frames(StackId stack) const;

 private:
  struct Impl;
  explicit Session(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace memtrail
