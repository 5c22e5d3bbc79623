// json and chrome exports.
#include <algorithm>

#include "memtrail/export.hpp"
#include "memtrail/size.hpp"

namespace memtrail {

namespace {

using nlohmann::json;

std::string site_name(const Analysis& a, std::uint32_t site) {
  if (site >= a.sites.size() || a.sites[site].frames.empty()) return "(no stack)";
  return a.sites[site].frames.front().describe();
}

double us(std::uint64_t ns) {
  return static_cast<double>(ns) / 1000.0;
}

}  // namespace

json to_full_json(const Analysis& a) {
  json j = to_report_json(a, 0);
  json sites = json::array();
  for (std::uint32_t i = 0; i < a.sites.size(); ++i) {
    const Site& s = a.sites[i];
    json site = site_to_json(a, i);
    site["stack_id"] = s.stack;
    site["direct_bytes"] = s.direct_bytes;
    site["indirect_bytes"] = s.indirect_bytes;
    site["reachable_bytes"] = s.reachable_bytes;
    sites.push_back(std::move(site));
  }
  j["sites"] = sites;
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
    blocks.push_back({{"pool", b.pool},
                      {"site", b.site},
                      {"address", b.address},
                      {"size", b.size},
                      {"alloc_ns", b.alloc_ns},
                      {"free_ns", b.free_ns == kTimeMax ? json(nullptr) : json(b.free_ns)},
                      {"thread", b.thread}});
  j["large_blocks"] = blocks;
  j["timeline"]["device_free"] = series_to_json(a.samples.device_free);
  return j;
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
                        {"leaked", b.free_ns == kTimeMax}}}});
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
