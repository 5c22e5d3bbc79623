// memtrail analysis: one streaming pass over a .mtr trace that computes every
// number the CLI (`report`, `check`, `diff`, `export`) and the GUI show.
//
//   memtrail::AnalysisOptions opt;           // whole trace, symbolized
//   memtrail::Analysis a = memtrail::analyze("run.mtr", opt);
//   if (!a.usable(opt)) { fputs(a.error.c_str(), stderr); return 2; }
//   std::cout << memtrail::to_report_json(a).dump(2);  // report_json.hpp
//
// Memory is bounded by the live set plus the number of sites and stack nodes,
// never by the number of events: timelines are decimated on the fly to at
// most 2 * timeline_points buckets.
//
// Definitions (docs/analyzer.md has the long form):
// - used bytes of a pool = granted bytes of its live alloc/reuse blocks;
//   reserved bytes = bytes of its live segments.
// - leaf pools: the analyzed pools that are no analyzed pool's upstream
//   (PoolInfo::parent). An upstream records the segments it hands to the pool
//   above it as its own alloc/free events, so the same bytes appear once per
//   level of an allocator stack. Every process-wide figure counts leaf pools
//   only: the summary's peak/final used, allocations, frees, bytes_allocated,
//   temporary_allocations, leaked and live_at_range_end, the Leaks totals
//   and sites, top_sites(), the diff's sites, the folded and pprof exports
//   and both histograms. Per-pool figures (PoolStats, Site) stay per pool: an
//   upstream still shows what it handed out. The anomaly counters
//   (unmatched/late-matched frees, replaced blocks) and `events` cover every
//   pool.
// - a `reuse` event is an allocation served from cache: it counts in
//   `allocations` and in `reuses`.
// - temporary allocation: freed by the thread that allocated it, with no other
//   allocation by that thread in between (compared by pool + address).
// - leaked: blocks allocated inside the range and still live at the end of
//   the trace, classified by `reachability` events when the trace has them
//   (direct + indirect = leaked, reachable = not leaked); a live block with no
//   classification counts as a direct leak. Every pool's PoolStats and sites
//   show its leaks; the totals and Leaks::sites count leaf pools.
// - live at range end: blocks allocated inside the range and still live when
//   the range ends (what a per-test "still live when the body returns" limit
//   wants; equals the live set at the end of the trace when no range is set).
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "memtrail/event.hpp"
#include "memtrail/frame.hpp"
#include "memtrail/ids.hpp"
#include "memtrail/tally.hpp"
#include "memtrail/trace_file.hpp"
#include "memtrail/workspaces.hpp"

namespace memtrail {

// ---------------------------------------------------------------- symbols

// Resolves instruction pointers to Frames with elfutils libdwfl, offline, from
// the module paths recorded in the trace. Build ids are verified; a missing or
// mismatched file degrades to `module+0xoffset`, never an error. Results are
// cached per address and modules are opened lazily. Not thread-safe.
namespace detail {
struct OpenedModule;  // module_open.hpp
}

class Symbolizer {
 public:
  Symbolizer();
  ~Symbolizer();
  Symbolizer(const Symbolizer&) = delete;
  Symbolizer& operator=(const Symbolizer&) = delete;

  // Adds or replaces (same id) a module of the traced process.
  void add_module(const ModuleInfo& module);
  // When false, only module+offset is resolved (no ELF/DWARF is opened).
  void set_enabled(bool enabled);

  // Frames for one ip, innermost inlined first. `return_address`: the ip is
  // a return address (every frame but the innermost), so ip-1 is looked up
  // to land inside the call instruction.
  const std::vector<Frame>& resolve(std::uint64_t ip, bool return_address);
  // Whether `ip`'s module was opened and read (after a resolve of `ip`):
  // its frames, named or not, are then what the file says, not a fallback
  // for a file that is missing, unreadable or of another build.
  bool read_module_of(std::uint64_t ip) const;

  // Why a module could not be used ("x.so: build id mismatch"), once each.
  const std::vector<std::string>& warnings() const;

  // Modules already opened elsewhere (the ModulePreloader): a module whose
  // ModuleInfo equals one of them is taken from there on its first lookup
  // instead of being opened again. What is resolved does not change.
  void adopt_preopened(std::vector<detail::OpenedModule> modules);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// ---------------------------------------------------------------- options

inline constexpr std::uint64_t kTimeMax = std::numeric_limits<std::uint64_t>::max();

struct AnalysisOptions {
  // Range, in trace time (ns since trace start), inclusive. Counters, peaks,
  // histograms, sites and leaks consider only events inside the range; the
  // live state before the range is still replayed so used/reserved are right.
  std::uint64_t from_ns = 0;
  std::uint64_t to_ns = kTimeMax;
  // The range starts at the first `mark` with this text (empty: from_ns) and
  // ends at the first `to_mark` after it. A mark that never occurs is an
  // error ("mark 'X' not found").
  std::string from_mark;
  std::string to_mark;
  // Marks with this text are iteration boundaries: the stretch between two
  // of them on one thread is an entry of a ScopeKind::iteration scope named
  // after the mark (entries, bytes escaped, growth per entry and its sites,
  // as for recorded scopes), for programs that record no scopes.
  std::string iteration_mark;
  // With no iteration_mark: the first loop the program marked with
  // memtrail_iteration_begin() (c_api.h) is the iteration scope, as if
  // named by iteration_mark.
  bool iterations_from_marks = true;
  // Only these pools (by name) are analyzed; empty = all pools.
  std::vector<std::string> pools;

  bool symbolize = true;  // false: frames are module+offset only
  // Sites are (pool, symbolized stack) as a reader sees them: stacks whose
  // frames have the same function, file, line and inlining merge into one
  // site. True keeps one site per recorded stack (raw return addresses).
  bool group_by_address = false;
  // Reuse and update TRACE.symbols (frames keyed by build id + offset) so
  // later reports of the same trace skip DWARF. Best effort, never an error.
  bool symbol_cache = true;
  std::size_t timeline_points = 1000;  // timelines keep between N and 2N points
  // Blocks at least this large get a lifetime record (GUI lifetime bars,
  // Chrome slices); at most max_large_blocks are kept, the largest first.
  std::uint64_t large_block_bytes = 1 << 20;
  std::size_t max_large_blocks = 10000;
  std::size_t max_marks = 100000;

  // Cut files (bytes after the last whole chunk) and corrupt chunks are
  // errors unless this is set; then what was read is analyzed and `warning`
  // says what was dropped.
  bool allow_partial = false;
};

// Called every ~1M events with the number read so far; return false to cancel
// (the Analysis then has error "cancelled").
using ProgressFn = std::function<bool(std::uint64_t events_read)>;

// ---------------------------------------------------------------- results

// Log2 histogram: bucket i counts values in [2^i, 2^(i+1)); bucket 0 also
// holds 0.
struct Histogram {
  std::vector<std::uint64_t> counts;  // 64 buckets
  std::vector<std::uint64_t> sums;    // sum of the values per bucket
  static std::uint64_t bucket_low(std::size_t i) { return i == 0 ? 0 : (std::uint64_t{1} << i); }
};

// A decimated series: `time_ns[i]` is the start of a bucket, `value[i]` the
// maximum reached inside it (peaks are never lost to decimation).
struct Series {
  std::vector<std::uint64_t> time_ns;
  std::vector<std::uint64_t> value;
};

struct Summary {
  std::uint64_t duration_ns = 0;  // last event time − first event time (in range)
  std::uint64_t first_event_ns = 0;
  std::uint64_t last_event_ns = 0;
  std::uint64_t events = 0;              // in range, all kinds
  std::uint64_t allocations = 0;         // alloc + reuse (leaf pools, as below)
  std::uint64_t frees = 0;               // matched frees
  std::uint64_t unmatched_frees = 0;     // free of an address not live (not counted in frees)
  std::uint64_t late_matched_frees = 0;  // free seen before its alloc (cross-thread race), matched
  std::uint64_t replaced_blocks = 0;     // alloc at a live address (its free was lost)
  std::uint64_t temporary_allocations = 0;
  std::uint64_t bytes_allocated = 0;  // granted
  std::uint64_t peak_used_bytes = 0;  // process-wide (see definitions above)
  std::uint64_t peak_time_ns = 0;
  // The peak as a position in the file: the state after its first
  // peak_position events (exact where events share peak_time_ns).
  std::uint64_t peak_position = 0;
  std::uint64_t final_used_bytes = 0;
  Tally leaked{};  // direct + indirect
  Tally live_at_range_end{};
  std::uint64_t peak_rss_bytes = 0;  // from `sample` events; 0 if none
  std::uint64_t samples = 0;
};

struct LeakSite {
  SiteId site{};
  LeakClass kind = LeakClass::direct;
  Tally tally{};  // the site's blocks of this class
};

struct Leaks {
  Tally direct{}, indirect{}, reachable{};
  // Valgrind's "possibly lost" (LeakClass::possible): not in `leaked`.
  Tally possible{};
  // The C/C++ runtime's own blocks (LeakClass::runtime): not the program's,
  // in no other class and no site (as Valgrind and LSan leave them out).
  Tally runtime{};
  // Live when the image called exec (a MarkDetail::exec mark ends the
  // trace): not classified, in no other class and no site, as Valgrind
  // classifies no image that exec'd. A failed exec's blocks are in the
  // trace that goes on after it (an inherited mark there).
  Tally exec_replaced{};
  bool ended_at_exec = false;  // the trace had a MarkDetail::exec mark
  bool classified = false;     // the trace had reachability events
  // Sorted by bytes, descending; reachable sites included (kind reachable).
  std::vector<LeakSite> sites;
};

// All allocations of one pool from one call stack.
struct Site {
  StackId stack{};  // innermost stack node id; kNoStack: no stack recorded
  PoolId pool{};
  FrameList frames;         // innermost first, inlined frames expanded
  std::uint64_t calls = 0;  // allocations (alloc + reuse) in range
  std::uint64_t reuses = 0;
  std::uint64_t bytes_allocated = 0;
  std::uint64_t temporaries = 0;
  std::uint64_t peak_bytes = 0;  // this site's live bytes at the summary peak
  Tally leaked{};                // direct + indirect
  Tally direct{}, indirect{}, reachable{};
  Tally possible{};  // not in `leaked`
  Tally live_at_range_end{};
};

// Fragmentation of one pool at one moment. Only pools with segment events
// have it (a pool's blocks are placed inside its segments).
struct Fragmentation {
  std::uint64_t time_ns = 0;
  std::uint64_t reserved_bytes = 0;
  std::uint64_t used_bytes = 0;
  std::uint64_t free_bytes = 0;                // reserved − used (cached or fragmented)
  std::uint64_t free_in_partial_segments = 0;  // free bytes in segments holding ≥1 block
  std::uint64_t largest_free_block = 0;        // largest gap between blocks / segment ends
  double external = 0;                         // 1 − largest_free / free_bytes (0 if no free)
};

struct PoolStats {
  PoolInfo info;
  std::string parent_name;
  // Another analyzed pool takes its segments from this one: left out of the
  // process-wide figures (see "leaf pools" above).
  bool upstream = false;
  std::uint64_t allocations = 0;  // alloc + reuse in range
  std::uint64_t reuses = 0;
  std::uint64_t frees = 0;
  std::uint64_t segment_reserves = 0, segment_releases = 0;
  std::uint64_t bytes_allocated = 0;
  std::uint64_t peak_used_bytes = 0, peak_used_time_ns = 0;
  std::uint64_t peak_reserved_bytes = 0, peak_reserved_time_ns = 0;
  std::uint64_t final_used_bytes = 0, final_reserved_bytes = 0;
  std::uint64_t live_blocks = 0;  // at the end of the range
  Tally leaked{};
  std::uint64_t ooms = 0;
  double reuse_ratio = 0;  // reuses / allocations (cache-hit ratio)
  bool has_segments = false;
  Series used, reserved;                     // over time (decimated, max per bucket)
  std::vector<Fragmentation> fragmentation;  // over time, one per timeline bucket
  Fragmentation final_fragmentation;
};

// An allocation site that makes a scope grow: its bytes allocated inside
// the scope and still live rose by this much per entry, from the end of the
// first entry to the end of the last.
struct GrowthSite {
  SiteId site{};
  double bytes_per_entry = 0;
  std::uint64_t live_bytes = 0;  // from this site, at the end of the last entry
};

struct ScopeStats {
  ScopeInfo info;
  std::string pool_name;
  std::uint64_t entries = 0;  // scope_end events in range
  // Sum over entries of the bytes allocated inside the entry (on the entering
  // thread; in the scope's pool when it has one) still live at its end.
  std::uint64_t bytes_escaped = 0;
  std::uint64_t max_escaped_per_entry = 0;
  // Least-squares slope of "bytes allocated inside this scope and still live"
  // measured at each scope_end, per entry: > 0 for a loop that leaks.
  double growth_per_entry_bytes = 0;
  std::uint64_t live_bytes_at_end = 0;  // allocated inside, still live at range end
  std::uint64_t workspace_resets = 0, spills = 0, spilled_bytes = 0;
  // The sites that grow by at least one byte per entry, most first (at most
  // 10); empty with fewer than two entries.
  std::vector<GrowthSite> growth_sites;
  // Per entry over time (GUI "memory per iteration"): at each scope_end, the
  // bytes that escaped that entry, and the scope's live bytes (decimated).
  Series escaped_per_entry, live_over_entries;
};

struct Mark {
  std::uint64_t time_ns = 0;
  std::uint32_t thread = 0;
  std::string text;
};

// Events the recorder could not record (MarkDetail::lost marks), summed by
// reason: the trace is short of them.
struct LostEvents {
  LostReason reason = LostReason::unknown;
  std::string words;  // the recorder's reason, e.g. "before start-up: ..."
  std::uint64_t count = 0;
};

// Lifetime of one large block (GUI lifetime bars, Chrome slices).
struct BlockLifetime {
  PoolId pool{};
  SiteId site{};
  std::uint64_t address = 0, size = 0;
  std::uint64_t alloc_ns = 0;
  std::uint64_t free_ns = kTimeMax;  // kTimeMax: still live at the end
  std::uint32_t thread = 0;
  // Live at the end of the trace: its class (reachable is no leak, as in
  // the report). unknown: freed, or live without a classification.
  LeakClass leak = LeakClass::unknown;
};

struct ProcessSamples {
  Series rss, heap_used, heap_reserved, device_free;
};

struct Analysis {
  // Input status. `error` non-empty: reading stopped (bad header, corrupt
  // chunk, cut file without allow_partial, missing mark, cancelled).
  std::string path;
  TraceHeader header;
  ReadResult read;
  std::string error;    // one line
  std::string warning;  // one line (dropped bytes, missing end marker)
  bool usable(const AnalysisOptions& o) const { return error.empty(); }

  AnalysisOptions options;
  std::uint64_t range_from_ns = 0, range_to_ns = kTimeMax;  // resolved (marks applied)

  Summary summary;
  Leaks leaks;
  // Unordered; see top_sites(). A deque: the engine hands its sites over
  // one by one while freeing its own, so 10^5 sites are never held twice
  // (a vector needs its whole size reserved while the engine still holds
  // them: the GUI's memory peak with many stacks, docs/BENCHMARKS.md).
  std::deque<Site> sites;
  std::vector<PoolStats> pools;
  std::vector<std::string> pool_names;  // every pool the trace defines, analyzed or not
  std::vector<ScopeStats> scopes;
  // One per pool of kind workspace (memtrail/workspaces.hpp).
  std::vector<WorkspaceReport> workspaces;

  Histogram size_histogram;      // granted size of allocations in range (leaf pools)
  Histogram lifetime_histogram;  // ns from alloc to free, blocks freed in range (leaf pools)
  Series used;                   // process-wide used over time
  ProcessSamples samples;
  std::vector<Mark> marks;
  // The process was ended by this signal (a MarkDetail::signal mark, the
  // recorder's last event): its live blocks were not classified. 0 = not.
  int ended_by_signal = 0;
  std::string ended_by_signal_name;  // "SIGTERM"; "signal N" if unnamed
  // `memtrail attach` traced a running process from some point on (a
  // MarkDetail::attach mark): blocks allocated before are unknown, their
  // frees are the unmatched frees, and live blocks were not classified.
  bool attached = false;
  // Events of the program that are not in the trace, by reason (empty: none
  // said lost). A trace without its end-of-trace marker (read.complete false)
  // lost the events after its last whole chunk too, uncounted.
  std::vector<LostEvents> lost_events;
  std::uint64_t lost_event_count() const;
  std::vector<BlockLifetime> large_blocks;  // sorted by alloc time
  std::vector<ThreadInfo> threads;          // by id (index = id), may have gaps
  std::vector<ModuleInfo> modules;
  std::vector<StackNode> stack_nodes;  // by id
  // The text of each Python frame of the stacks ("function\x1ffile\x1fline")
  // by its string id (kPythonFrameTag, event.hpp).
  std::unordered_map<std::uint32_t, std::string> python_frames;
  // Every distinct frame of the sites, once; each Site::frames indexes it.
  std::shared_ptr<const FrameTable> frame_table;
  std::vector<std::string> symbol_warnings;

  const PoolStats* pool(PoolId id) const;
  const PoolStats* pool_by_name(const std::string& name) const;
  // Raw ips of a stack, innermost first.
  std::vector<std::uint64_t> stack_ips(StackId stack) const;
  // fn(ip) for each of them, allocating nothing (symbolize_sites walks 10^6
  // stacks twice: a vector per walk was a quarter of `report`'s time).
  template <class Fn>
  void for_each_stack_ip(StackId stack, Fn&& fn) const {
    // Bounded walk: a corrupt trie may contain a cycle.
    std::size_t n = 0;
    for (std::uint32_t id = stack.value; id != 0 && id < stack_nodes.size() && n < 1024;
         id = stack_nodes[id].parent, ++n) {
      if (stack_nodes[id].id != id) break;  // never defined
      fn(stack_nodes[id].ip);
    }
  }
};

enum class SiteOrder { calls, bytes, peak, temporaries, leaked };
// Sites, best first, at most n (0 = all), zero-valued omitted; sites of
// upstream pools are left out (see "leaf pools").
std::vector<SiteId> top_sites(const Analysis& a, SiteOrder order, std::size_t n);

// One streaming pass. Never throws on bad input: see Analysis::error.
Analysis analyze(const std::string& path, const AnalysisOptions& options = {},
                 const ProgressFn& progress = {});

// ---------------------------------------------------------------- segment map

struct BlockInfo {
  std::uint64_t address = 0, size = 0;
  std::uint64_t alloc_ns = 0;
  StackId stack{};
  std::uint32_t thread = 0;
};

struct SegmentInfo {
  std::uint64_t address = 0, size = 0;
  std::vector<BlockInfo> blocks;  // sorted by address
};

struct SegmentMap {
  std::string error;  // one line; empty on success
  std::uint64_t time_ns = 0;
  PoolStats pool_state;                     // info, used/reserved at time_ns (series empty)
  std::vector<SegmentInfo> segments;        // sorted by address
  std::vector<BlockInfo> outside_segments;  // blocks no segment covers (e.g. malloc pool)
  Fragmentation fragmentation;
};

// Streams the trace again up to `time_ns` (inclusive) and returns the pool's
// segments with the blocks live in them at that moment.
SegmentMap segment_map_at(const std::string& path, PoolId pool, std::uint64_t time_ns);

}  // namespace memtrail
