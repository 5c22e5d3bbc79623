// json and chrome exports.
#include <algorithm>

#include "memtrail/export.hpp"
#include "memtrail/report_json.hpp"
#include "memtrail/site_caller.hpp"
#include "memtrail/size.hpp"
#include "site_json.hpp"

namespace memtrail {

namespace {

using nlohmann::json;

std::string site_name(const Analysis& a, SiteId site) {
  if (site.value >= a.sites.size() || at(a.sites, site).frames.empty()) return "(no stack)";
  return at(a.sites, site).frames.front().describe();
}

json site_ids_json(const std::vector<SiteId>& sites) {
  json out = json::array();
  for (SiteId s : sites) out.push_back(s.value);
  return out;
}

double us(std::uint64_t ns) {
  return static_cast<double>(ns) / 1000.0;
}

}  // namespace

namespace {

// The sites the export lists: all of them, or (with `top`) those its top
// lists and leak sites name.
std::vector<bool> sites_to_write(const Analysis& a, const json& base, std::size_t top) {
  std::vector<bool> keep(a.sites.size(), top == 0);
  if (top == 0) return keep;
  for (const auto& [name, list] : base["top_sites"].items())
    for (const auto& id : list) keep[id.get<std::uint32_t>()] = true;
  for (const auto& ls : base["leaks"]["sites"]) keep[ls["site"].get<std::uint32_t>()] = true;
  return keep;
}

// The report's sections with sites named by id: top lists are arrays of site
// ids, leak sites {site, kind, bytes, blocks, pool}; pools get timelines.
json export_base(const Analysis& a, std::size_t top) {
  json j = to_report_json(a, 1);  // the sections; its one-site lists are replaced
  // Its own `frames` (below) is every frame of the analysis: a growth site
  // keeps its stack inline, as before the report's frames table.
  j.erase("frames");
  for (std::size_t s = 0; s < a.scopes.size(); ++s)
    for (std::size_t g = 0; g < a.scopes[s].growth_sites.size(); ++g)
      j["scopes"][s]["growth_sites"][g]["site"] = site_to_json(a, a.scopes[s].growth_sites[g].site);
  json tops;
  for (auto& [name, order] : detail::kTopSiteLists)
    tops[name] = site_ids_json(top_sites(a, order, top));
  j["top_sites"] = tops;
  json leak_sites = json::array();
  for (const LeakSite& ls : a.leaks.sites) {
    if (top && leak_sites.size() >= top) break;
    const PoolStats* p = a.pool(at(a.sites, ls.site).pool);
    leak_sites.push_back({{"site", ls.site.value},
                          {"kind", std::string(to_string(ls.kind))},
                          {"bytes", ls.tally.bytes},
                          {"blocks", ls.tally.blocks},
                          {"pool", p ? p->info.name : std::string()}});
  }
  j["leaks"]["sites"] = leak_sites;
  for (std::size_t i = 0; i < a.pools.size(); ++i) {
    const PoolStats& p = a.pools[i];
    json frag = json::array();
    for (const Fragmentation& f : p.fragmentation) frag.push_back(fragmentation_to_json(f));
    j["pools"][i]["timeline"] = {{"used", series_to_json(p.used)},
                                 {"reserved", series_to_json(p.reserved)}};
    j["pools"][i]["fragmentation_over_time"] = frag;
  }
  json marks = json::array();
  for (const Mark& m : a.marks)
    marks.push_back({{"time_ns", m.time_ns}, {"thread", m.thread}, {"text", m.text}});
  j["marks"] = marks;
  json blocks = json::array();
  for (const BlockLifetime& b : a.large_blocks)
    blocks.push_back(
        {{"pool", b.pool.value},
         {"site", b.site.value},
         {"address", b.address},
         {"size", b.size},
         {"alloc_ns", b.alloc_ns},
         {"free_ns", b.free_ns == kTimeMax ? json(nullptr) : json(b.free_ns)},
         {"thread", b.thread},
         {"leak", b.free_ns == kTimeMax ? json(std::string(to_string(b.leak))) : json(nullptr)}});
  j["large_blocks"] = blocks;
  j["timeline"]["device_free"] = series_to_json(a.samples.device_free);
  j["layout"] = "by-id";
  return j;
}

// One site: its counters and its frames as ids into the export's `frames`.
json site_by_id(const Analysis& a, SiteId i, bool shared_table) {
  const Site& s = at(a.sites, i);
  json j = detail::site_counters_json(a, i);
  j["stack_id"] = s.stack.value;
  j["direct_bytes"] = s.direct.bytes;
  j["indirect_bytes"] = s.indirect.bytes;
  j["reachable_bytes"] = s.reachable.bytes;
  if (shared_table && s.frames.table() == a.frame_table.get())
    j["frames"] = std::vector<std::uint32_t>(s.frames.indices().begin(), s.frames.indices().end());
  else
    j["stack"] = frames_to_json(s.frames);  // a list over a table of its own
  return j;
}

}  // namespace

void write_full_json(const Analysis& a, std::size_t top, std::ostream& out) {
  json base = export_base(a, top);
  std::vector<bool> keep = sites_to_write(a, base, top);
  std::string head = base.dump();
  head.pop_back();  // the closing brace: frames and sites follow, streamed
  out << head << ",\"frames\":[";
  bool shared_table = a.frame_table != nullptr;
  if (shared_table) {
    // Every distinct frame once; sites refer to them by index.
    const auto& frames = a.frame_table->frames;
    for (std::size_t i = 0; i < frames.size(); ++i) {
      const Frame& f = frames[i];
      out << (i ? "," : "")
          << json{{"function", f.function}, {"file", f.file},       {"line", f.line},
                  {"module", f.module},     {"address", f.address}, {"offset", f.offset},
                  {"inlined", f.inlined}}
                 .dump();
    }
  }
  out << "],\"sites\":[";
  bool first = true;
  for (std::uint32_t i = 0; i < a.sites.size(); ++i) {
    if (!keep[i]) continue;
    out << (first ? "" : ",") << site_by_id(a, SiteId{i}, shared_table).dump();
    first = false;
  }
  out << "]}\n";
}

json to_chrome_trace(const Analysis& a) {
  json events = json::array();
  const std::uint32_t pid = a.header.pid ? a.header.pid : 1;
  std::string name = a.header.command_line.empty() ? a.path : a.header.command_line;
  events.push_back({{"name", "process_name"},
                    {"ph", "M"},
                    {"pid", pid},
                    {"tid", 0},
                    {"args", {{"name", name}}}});
  for (const ThreadInfo& t : a.threads)
    if (t.id != 0)
      events.push_back(
          {{"name", "thread_name"},
           {"ph", "M"},
           {"pid", pid},
           {"tid", t.id},
           {"args", {{"name", t.name.empty() ? "thread " + std::to_string(t.tid) : t.name}}}});
  // Counters: Perfetto makes one track per "<name> <arg key>".
  for (const PoolStats& p : a.pools) {
    std::string track = "pool " + p.info.name;
    for (std::size_t i = 0; i < p.used.time_ns.size(); ++i)
      events.push_back({{"name", track},
                        {"ph", "C"},
                        {"ts", us(p.used.time_ns[i])},
                        {"pid", pid},
                        {"tid", 0},
                        {"args", {{"used", p.used.value[i]}, {"reserved", p.reserved.value[i]}}}});
  }
  for (std::size_t i = 0; i < a.used.time_ns.size(); ++i)
    events.push_back({{"name", "memory"},
                      {"ph", "C"},
                      {"ts", us(a.used.time_ns[i])},
                      {"pid", pid},
                      {"tid", 0},
                      {"args", {{"used", a.used.value[i]}}}});
  const ProcessSamples& s = a.samples;
  for (std::size_t i = 0; i < s.rss.time_ns.size(); ++i)
    events.push_back({{"name", "process"},
                      {"ph", "C"},
                      {"ts", us(s.rss.time_ns[i])},
                      {"pid", pid},
                      {"tid", 0},
                      {"args",
                       {{"rss", s.rss.value[i]},
                        {"heap_used", s.heap_used.value[i]},
                        {"heap_reserved", s.heap_reserved.value[i]}}}});
  // Large blocks as complete slices on the allocating thread.
  std::uint64_t end = a.summary.last_event_ns;
  for (const BlockLifetime& b : a.large_blocks) {
    std::uint64_t free_ns = b.free_ns == kTimeMax ? std::max(end, b.alloc_ns) : b.free_ns;
    const PoolStats* p = a.pool(b.pool);
    events.push_back({{"name", format_size(b.size) + " block"},
                      {"cat", "alloc"},
                      {"ph", "X"},
                      {"ts", us(b.alloc_ns)},
                      {"dur", us(free_ns - std::min(free_ns, b.alloc_ns))},
                      {"pid", pid},
                      {"tid", b.thread},
                      {"args",
                       {{"size", b.size},
                        {"address", b.address},
                        {"pool", p ? p->info.name : std::string()},
                        {"site", site_name(a, b.site)},
                        {"leaked", b.free_ns == kTimeMax && b.leak != LeakClass::reachable}}}});
  }
  for (const Mark& m : a.marks)
    events.push_back({{"name", m.text},
                      {"cat", "mark"},
                      {"ph", "i"},
                      {"s", "g"},
                      {"ts", us(m.time_ns)},
                      {"pid", pid},
                      {"tid", m.thread}});
  return json{{"traceEvents", events}, {"displayTimeUnit", "ns"}};
}

}  // namespace memtrail
