#include "report_at.hpp"

#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli_args.hpp"
#include "memtrail/session.hpp"

namespace memtrail::cli {

namespace {

const char* source_name(PoolBreakdown::Source s) {
  switch (s) {
    case PoolBreakdown::Source::segments:
      return "segments";
    case PoolBreakdown::Source::heap_samples:
      return "heap samples";
    case PoolBreakdown::Source::none:
      return "none";
  }
  return "?";
}

// Bytes per span state and segment counts of one pool's map.
struct MapSummary {
  std::uint64_t segments = 0, segments_in_use = 0, live_blocks = 0;
  std::uint64_t allocated = 0, inactive_split = 0, cached_free = 0, largest_free = 0;
};

MapSummary summarize(const SegmentMap& m) {
  MapSummary s;
  s.segments = m.segments.size();
  s.largest_free = m.fragmentation.largest_free_block;
  for (const SegmentInfo& seg : m.segments) {
    s.segments_in_use += !seg.blocks.empty();
    s.live_blocks += seg.blocks.size();
    for (const SegmentSpan& sp : segment_spans(seg))
      (sp.state == SpanState::allocated        ? s.allocated
       : sp.state == SpanState::inactive_split ? s.inactive_split
                                               : s.cached_free) += sp.size;
  }
  return s;
}

}  // namespace

int report_at(const std::string& trace, const AnalysisOptions& options, std::uint64_t at_ns,
              bool json) {
  SessionOptions so;
  so.analysis = options;
  so.analysis.symbolize = false;  // no stacks are shown
  OpenResult r = Session::open(trace, so);
  if (!r.session) {
    std::fprintf(stderr, "memtrail report: %s\n", r.message.c_str());
    return 2;
  }
  if (!r.warning.empty()) std::fprintf(stderr, "memtrail report: warning: %s\n", r.warning.c_str());
  const Session& s = *r.session;
  nlohmann::json out = {{"schema", "memtrail.moment/1"}, {"time_ns", at_ns}};
  out["pools"] = nlohmann::json::array();
  std::string text = "At " + std::to_string(at_ns) + " ns:\n";
  char line[256];
  std::snprintf(line, sizeof line, "  %-16s %14s %14s %14s %14s  %s\n", "pool", "reserved", "used",
                "cached free", "fragmented", "source");
  text += line;
  for (const PoolBreakdown& b : s.breakdown(at_ns)) {
    nlohmann::json p = {{"pool", b.name},
                        {"reserved_bytes", b.reserved},
                        {"used_bytes", b.used},
                        {"cached_free_bytes", b.cached_free},
                        {"fragmented_bytes", b.fragmented},
                        {"source", source_name(b.source)}};
    std::snprintf(line, sizeof line, "  %-16s %14llu %14llu %14llu %14llu  %s\n", b.name.c_str(),
                  static_cast<unsigned long long>(b.reserved),
                  static_cast<unsigned long long>(b.used),
                  static_cast<unsigned long long>(b.cached_free),
                  static_cast<unsigned long long>(b.fragmented), source_name(b.source));
    text += line;
    if (b.source == PoolBreakdown::Source::segments) {
      SegmentMap m = s.segment_map(b.pool, at_ns);
      if (!m.error.empty()) {
        std::fprintf(stderr, "memtrail report: %s\n", m.error.c_str());
        return 2;
      }
      MapSummary ms = summarize(m);
      p["segments"] = {{"count", ms.segments},
                       {"holding_live_blocks", ms.segments_in_use},
                       {"live_blocks", ms.live_blocks},
                       {"allocated_bytes", ms.allocated},
                       {"inactive_split_bytes", ms.inactive_split},
                       {"cached_free_bytes", ms.cached_free},
                       {"largest_free_bytes", ms.largest_free}};
      std::snprintf(line, sizeof line,
                    "    %llu segments (%llu holding live blocks), %llu live blocks, largest "
                    "free span %llu\n",
                    static_cast<unsigned long long>(ms.segments),
                    static_cast<unsigned long long>(ms.segments_in_use),
                    static_cast<unsigned long long>(ms.live_blocks),
                    static_cast<unsigned long long>(ms.largest_free));
      text += line;
    }
    out["pools"].push_back(std::move(p));
  }
  if (json)
    std::cout << out.dump(2) << "\n";
  else
    std::cout << text;
  return finish_stdout_report("report");
}

}  // namespace memtrail::cli
