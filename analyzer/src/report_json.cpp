// The `memtrail.report/1` JSON: DESIGN.md's stable keys first, then more.
#include <algorithm>
#include <functional>

#include "json_stream.hpp"
#include "memtrail/analysis.hpp"
#include "memtrail/report_json.hpp"
#include "memtrail/site_caller.hpp"
#include "report_frames.hpp"
#include "site_json.hpp"

namespace memtrail {

namespace {

using nlohmann::json;

std::uint64_t series_max(const Series& s) {
  std::uint64_t m = 0;
  for (auto v : s.value) m = std::max(m, v);
  return m;
}

const char* lost_reason_name(LostReason r) {
  switch (r) {
    case LostReason::before_startup:
      return "before_startup";
    case LostReason::signal_handler:
      return "signal_handler";
    case LostReason::disk_space:
      return "disk_space";
    case LostReason::process_ended:
      return "process_ended";
    default:
      return "unknown";
  }
}

// trace.lost_events: what the recorder said it could not record, and
// whether the trace was cut (events after its last whole chunk, uncounted).
json lost_events_json(const Analysis& a) {
  json reasons = json::array();
  for (const LostEvents& l : a.lost_events)
    reasons.push_back(
        {{"reason", lost_reason_name(l.reason)}, {"count", l.count}, {"text", l.words}});
  return {{"count", a.lost_event_count()}, {"cut", !a.read.complete}, {"reasons", reasons}};
}

json histogram_json(const Histogram& h) {
  json buckets = json::array();
  for (std::size_t i = 0; i < h.counts.size(); ++i)
    if (h.counts[i])
      buckets.push_back({{"low", Histogram::bucket_low(i)},
                         {"high", i == 63 ? ~std::uint64_t{0} : (std::uint64_t{1} << (i + 1))},
                         {"count", h.counts[i]},
                         {"sum", h.sums[i]}});
  return buckets;
}

}  // namespace

nlohmann::json series_to_json(const Series& s) {
  return json{{"time_ns", s.time_ns}, {"value", s.value}};
}

nlohmann::json fragmentation_to_json(const Fragmentation& f) {
  return json{{"time_ns", f.time_ns},
              {"reserved_bytes", f.reserved_bytes},
              {"used_bytes", f.used_bytes},
              {"free_bytes", f.free_bytes},
              {"free_in_partial_segments", f.free_in_partial_segments},
              {"largest_free_block", f.largest_free_block},
              {"external", f.external}};
}

nlohmann::json detail::site_counters_json(const Analysis& a, SiteId i) {
  const Site& s = at(a.sites, i);
  const PoolStats* p = a.pool(s.pool);
  return json{{"site", i.value},
              {"pool", p ? p->info.name : std::string()},
              {"calls", s.calls},
              {"reuses", s.reuses},
              {"bytes_allocated", s.bytes_allocated},
              {"temporaries", s.temporaries},
              {"peak_bytes", s.peak_bytes},
              {"leaked_bytes", s.leaked.bytes},
              {"leaked_blocks", s.leaked.blocks},
              {"live_at_range_end_bytes", s.live_at_range_end.bytes},
              {"live_at_range_end_blocks", s.live_at_range_end.blocks},
              {"caller", caller_text(s.frames)}};
}

nlohmann::json site_to_json(const Analysis& a, SiteId i) {
  json j = detail::site_counters_json(a, i);
  j["stack"] = frames_to_json(at(a.sites, i).frames);
  return j;
}

nlohmann::json frame_to_json(const Frame& f) {
  return json{{"function", f.function}, {"file", f.file},       {"line", f.line},
              {"module", f.module},     {"address", f.address}, {"offset", f.offset},
              {"inlined", f.inlined}};
}

nlohmann::json frames_to_json(const FrameList& frames) {
  json out = json::array();
  for (const Frame& f : frames) out.push_back(frame_to_json(f));
  return out;
}

namespace {

// The top-site lists, in detail::kTopSiteLists' order, and the frames table
// of every site object the document holds (its growth sites and these).
struct SiteLists {
  std::vector<std::vector<SiteId>> top;
  detail::ReportFrames frames;
};

SiteLists site_lists(const Analysis& a, std::size_t top) {
  SiteLists out{{}, detail::ReportFrames(a)};
  for (auto& [name, order] : detail::kTopSiteLists) out.top.push_back(top_sites(a, order, top));
  // Ids in the order the document shows the sites: "scopes" comes before
  // "top_sites", whose lists come by name.
  for (const ScopeStats& sc : a.scopes)
    for (const GrowthSite& g : sc.growth_sites) out.frames.add(g.site);
  std::vector<std::size_t> by_name(out.top.size());
  for (std::size_t i = 0; i < by_name.size(); ++i) by_name[i] = i;
  std::sort(by_name.begin(), by_name.end(), [](std::size_t x, std::size_t y) {
    return std::string_view(detail::kTopSiteLists[x].first) <
           std::string_view(detail::kTopSiteLists[y].first);
  });
  for (std::size_t i : by_name)
    for (SiteId site : out.top[i]) out.frames.add(site);
  return out;
}

json summary_json(const Analysis& a) {
  const Summary& s = a.summary;
  return {{"events", s.events},
          {"allocations", s.allocations},
          {"frees", s.frees},
          {"temporary_allocations", s.temporary_allocations},
          {"peak_used_bytes", s.peak_used_bytes},
          {"leaked_bytes", s.leaked.bytes},
          {"leaked_blocks", s.leaked.blocks},
          {"duration_ns", s.duration_ns},
          {"peak_time_ns", s.peak_time_ns},
          {"bytes_allocated", s.bytes_allocated},
          {"final_used_bytes", s.final_used_bytes},
          {"unmatched_frees", s.unmatched_frees},
          {"late_matched_frees", s.late_matched_frees},
          {"replaced_blocks", s.replaced_blocks},
          {"live_at_range_end_bytes", s.live_at_range_end.bytes},
          {"live_at_range_end_blocks", s.live_at_range_end.blocks},
          {"peak_rss_bytes", s.peak_rss_bytes},
          {"peak_heap_used_bytes", series_max(a.samples.heap_used)},
          {"peak_heap_reserved_bytes", series_max(a.samples.heap_reserved)},
          {"samples", s.samples}};
}

// The totals by class; "sites" is filled by the caller (for_each_leak_site_json).
json leaks_json(const Analysis& a) {
  json leak_sites = json::array();
  return {{"direct_bytes", a.leaks.direct.bytes},
          {"direct_blocks", a.leaks.direct.blocks},
          {"indirect_bytes", a.leaks.indirect.bytes},
          {"indirect_blocks", a.leaks.indirect.blocks},
          {"reachable_bytes", a.leaks.reachable.bytes},
          {"reachable_blocks", a.leaks.reachable.blocks},
          {"possible_bytes", a.leaks.possible.bytes},
          {"possible_blocks", a.leaks.possible.blocks},
          {"runtime_bytes", a.leaks.runtime.bytes},
          {"runtime_blocks", a.leaks.runtime.blocks},
          {"exec_replaced_bytes", a.leaks.exec_replaced.bytes},
          {"exec_replaced_blocks", a.leaks.exec_replaced.blocks},
          {"ended_at_exec", a.leaks.ended_at_exec},
          {"classified", a.leaks.classified},
          {"sites", leak_sites}};
}

json pools_json(const Analysis& a) {
  json pools = json::array();
  for (const PoolStats& p : a.pools)
    pools.push_back({{"name", p.info.name},
                     {"kind", std::string(to_string(p.info.kind))},
                     {"space", std::string(to_string(p.info.space))},
                     {"device", p.info.device},
                     {"peak_used_bytes", p.peak_used_bytes},
                     {"peak_reserved_bytes", p.peak_reserved_bytes},
                     {"final_used_bytes", p.final_used_bytes},
                     {"final_reserved_bytes", p.final_reserved_bytes},
                     {"allocations", p.allocations},
                     {"reuses", p.reuses},
                     {"segment_reserves", p.segment_reserves},
                     {"id", p.info.id},
                     {"parent", p.parent_name},
                     {"upstream", p.upstream},
                     {"frees", p.frees},
                     {"segment_releases", p.segment_releases},
                     {"bytes_allocated", p.bytes_allocated},
                     {"peak_used_time_ns", p.peak_used_time_ns},
                     {"peak_reserved_time_ns", p.peak_reserved_time_ns},
                     {"live_blocks", p.live_blocks},
                     {"leaked_bytes", p.leaked.bytes},
                     {"leaked_blocks", p.leaked.blocks},
                     {"ooms", p.ooms},
                     {"reuse_ratio", p.reuse_ratio},
                     {"fragmentation", p.has_segments && p.allocations + p.live_blocks > 0
                                           ? fragmentation_to_json(p.final_fragmentation)
                                           : json(nullptr)}});
  return pools;
}

// Each scope with its growth sites (as frames-table ids).
json scopes_json(const Analysis& a, const detail::ReportFrames& frames) {
  json scopes = json::array();
  for (const ScopeStats& sc : a.scopes) {
    json growth = json::array();
    for (const GrowthSite& g : sc.growth_sites)
      growth.push_back({{"bytes_per_entry", g.bytes_per_entry},
                        {"live_bytes", g.live_bytes},
                        {"site", frames.site(g.site)}});
    scopes.push_back({{"name", sc.info.name},
                      {"entries", sc.entries},
                      {"bytes_escaped", sc.bytes_escaped},
                      {"growth_per_entry_bytes", sc.growth_per_entry_bytes},
                      {"kind", std::string(to_string(sc.info.kind))},
                      {"pool", sc.pool_name},
                      {"max_escaped_per_entry", sc.max_escaped_per_entry},
                      {"live_bytes_at_end", sc.live_bytes_at_end},
                      {"workspace_resets", sc.workspace_resets},
                      {"spills", sc.spills},
                      {"spilled_bytes", sc.spilled_bytes},
                      {"escaped_per_entry", series_to_json(sc.escaped_per_entry)},
                      {"growth_sites", growth}});
  }
  return scopes;
}

// Where the trace came from and how much of it was read.
json trace_json(const Analysis& a) {
  return {{"path", a.path},
          {"pid", a.header.pid},
          {"command_line", a.header.command_line},
          {"executable", a.header.executable},
          {"complete", a.read.complete},
          {"chunks", a.read.chunks},
          {"attached", a.attached},
          {"lost_events", lost_events_json(a)},
          {"ended_by_signal", a.ended_by_signal == 0 ? json(nullptr)
                                                     : json{{"number", a.ended_by_signal},
                                                            {"name", a.ended_by_signal_name}}}};
}

json warnings_json(const Analysis& a) {
  json warnings = json::array();
  if (!a.warning.empty()) warnings.push_back(a.warning);
  for (const auto& w : a.symbol_warnings) warnings.push_back(w);
  return warnings;
}

// Everything but the leak sites, the top-site lists and the frames table
// (empty arrays, filled or streamed by the callers below).
json report_skeleton(const Analysis& a, const detail::ReportFrames& frames) {
  json j;
  j["schema"] = "memtrail.report/1";
  j["summary"] = summary_json(a);
  j["leaks"] = leaks_json(a);
  j["pools"] = pools_json(a);
  j["scopes"] = scopes_json(a, frames);
  if (!a.workspaces.empty()) j["workspaces"] = workspaces_to_json(a);
  json tops;
  for (auto& [name, order] : detail::kTopSiteLists) tops[name] = json::array();
  j["top_sites"] = tops;
  j["frames"] = json::array();  // filled by the caller: ReportFrames
  j["histograms"] = {{"size_bytes", histogram_json(a.size_histogram)},
                     {"lifetime_ns", histogram_json(a.lifetime_histogram)}};
  j["timeline"] = {{"used", series_to_json(a.used)},
                   {"rss", series_to_json(a.samples.rss)},
                   {"heap_used", series_to_json(a.samples.heap_used)},
                   {"heap_reserved", series_to_json(a.samples.heap_reserved)}};
  j["range"] = {{"from_ns", a.range_from_ns},
                {"to_ns", a.range_to_ns == kTimeMax ? json(nullptr) : json(a.range_to_ns)}};
  j["trace"] = trace_json(a);
  j["warnings"] = warnings_json(a);
  return j;
}

using Emit = std::function<void(const json&)>;

void for_each_leak_site_json(const Analysis& a, std::size_t top, const Emit& emit) {
  std::size_t shown = 0;
  for (const LeakSite& ls : a.leaks.sites) {
    if (top && shown++ >= top) break;
    const Site& site = at(a.sites, ls.site);
    const PoolStats* p = a.pool(site.pool);
    emit({{"bytes", ls.tally.bytes},
          {"blocks", ls.tally.blocks},
          {"kind", std::string(to_string(ls.kind))},
          {"stack", frames_to_json(site.frames)},
          {"pool", p ? p->info.name : std::string()},
          {"site", ls.site.value},
          {"caller", caller_text(site.frames)}});
  }
}

void for_each_frame_json(const detail::ReportFrames& frames, const Emit& emit) {
  for (std::size_t i = 0; i < frames.size(); ++i) emit(frame_to_json(frames.frame(i)));
}

}  // namespace

nlohmann::json to_report_json(const Analysis& a, std::size_t top) {
  SiteLists lists = site_lists(a, top);
  json j = report_skeleton(a, lists.frames);
  for_each_leak_site_json(a, top, [&](const json& e) { j["leaks"]["sites"].push_back(e); });
  for (std::size_t i = 0; i < lists.top.size(); ++i)
    for (SiteId site : lists.top[i])
      j["top_sites"][detail::kTopSiteLists[i].first].push_back(lists.frames.site(site));
  for_each_frame_json(lists.frames, [&](const json& e) { j["frames"].push_back(e); });
  return j;
}

void write_report_json(std::ostream& out, const Analysis& a, std::size_t top,
                       const nlohmann::json& extra) {
  SiteLists lists = site_lists(a, top);
  json j = report_skeleton(a, lists.frames);
  for (auto& [key, value] : extra.items()) j[key] = value;
  detail::LazyArrays lazy;
  lazy["/leaks/sites"] = [&](const Emit& emit) { for_each_leak_site_json(a, top, emit); };
  for (std::size_t i = 0; i < lists.top.size(); ++i)
    lazy[std::string("/top_sites/") + detail::kTopSiteLists[i].first] = [&, i](const Emit& emit) {
      for (SiteId site : lists.top[i]) emit(lists.frames.site(site));
    };
  lazy["/frames"] = [&](const Emit& emit) { for_each_frame_json(lists.frames, emit); };
  detail::write_pretty_json(out, j, lazy);
}

}  // namespace memtrail
