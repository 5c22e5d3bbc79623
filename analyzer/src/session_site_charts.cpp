// Session::site_charts: the top sites' series over time, from a second pass
// over the file with a SiteChartTap on the Engine (memtrail/site_charts.hpp).
#include <sys/stat.h>

#include <algorithm>

#include "pipelined_read.hpp"
#include "session_impl.hpp"
#include "site_chart_tap.hpp"

namespace memtrail {

namespace {

constexpr std::uint32_t kNoSite = ~std::uint32_t{0};

// The merged whole() site of (pool, stack): site_of_stack holds one entry
// per pool a stack allocated in, so the pool picks among them.
std::uint32_t whole_site(const detail::SessionState& s, std::uint32_t pool, std::uint32_t stack) {
  auto [lo, hi] =
      std::equal_range(s.site_of_stack.begin(), s.site_of_stack.end(), std::pair{stack, 0u},
                       [](const auto& x, const auto& y) { return x.first < y.first; });
  for (auto it = lo; it != hi; ++it)
    if (s.whole.sites[it->second].pool.value == pool) return it->second;
  return kNoSite;
}

bool file_changed(const detail::SessionState& s) {
  struct stat st {};
  return ::stat(s.path.c_str(), &st) != 0 ||
         static_cast<std::uint64_t>(st.st_size) != s.file_bytes ||
         st.st_mtim.tv_sec != s.mtime.tv_sec || st.st_mtim.tv_nsec != s.mtime.tv_nsec;
}

// The pass's options: the session's pools, [t0, t1] as the range (what
// counts as an allocation of the range), nothing the charts do not need.
AnalysisOptions chart_pass_options(const detail::SessionState& s, std::uint64_t t0,
                                   std::uint64_t t1) {
  AnalysisOptions o;
  o.pools = s.options.analysis.pools;
  o.from_ns = t0;
  o.to_ns = t1;
  o.timeline_points = 16;
  o.symbolize = false;
  o.symbol_cache = false;
  o.max_large_blocks = 0;
  o.max_marks = 0;
  return o;
}

}  // namespace

SiteCharts Session::site_charts(const SiteChartRequest& request, const Analysis& sites,
                                const LoadProgressFn& progress) const {
  const Impl& s = *impl_;
  SiteCharts c;
  c.cost = request.cost;
  c.t0 = std::max(request.t0, s.first_ns);
  c.t1 = std::max(c.t0, std::min(request.t1, s.last_ns));

  std::vector<SiteId> top = request.sites ? *request.sites
                                          : top_sites(sites, chart_site_order(request.cost),
                                                      std::min<std::size_t>(request.top, 250));
  if (top.size() > 250) top.resize(250);                      // series are numbered in a byte
  std::vector<std::pair<std::uint32_t, std::uint32_t>> keys;  // (pool, whole() site)
  for (SiteId id : top) {
    const Site& site = at(sites.sites, id);
    keys.emplace_back(site.pool.value, whole_site(s, site.pool.value, site.stack.value));
    c.series.push_back(SiteSeries{false, id, {}});
  }
  c.series.push_back(SiteSeries{true, SiteId{}, {}});
  const auto other = static_cast<std::uint8_t>(top.size());
  auto resolve = [&](std::uint32_t pool, std::uint32_t stack) -> std::uint8_t {
    if (pool < s.upstream.size() && s.upstream[pool]) return detail::SiteChartTap::kNoSeries;
    const std::pair<std::uint32_t, std::uint32_t> key{pool, whole_site(s, pool, stack)};
    auto it = std::find(keys.begin(), keys.end(), key);
    return it == keys.end() ? other : static_cast<std::uint8_t>(it - keys.begin());
  };
  // The whole file: read it all as report does (range 0..kTimeMax), since
  // a few events lie outside [first_ns, last_ns] (threads' buffers interleave).
  const bool whole = request.t0 <= s.first_ns && request.t1 >= s.last_ns;
  detail::SiteChartTap tap(request.cost, c.series.size(), c.t0, c.t1, request.buckets, whole,
                           resolve);

  if (file_changed(s)) {
    c.error = s.path + ": the file changed since it was opened";
    return c;
  }
  const std::uint64_t total = s.whole.read.events;
  detail::Engine engine(
      chart_pass_options(s, whole ? 0 : c.t0, whole ? kTimeMax : c.t1), [&](std::uint64_t events) {
        return !progress || progress(LoadProgress{LoadStage::reading, events, total});
      });
  if (!whole) engine.stop_after(c.t1);
  engine.set_sample_fragmentation(false);
  engine.skip_stack_nodes();
  engine.set_site_tap(&tap);
  TraceReader reader(s.path);
  ReadResult r = detail::read_pipelined(reader, engine);
  if (!reader.header_error().empty() || !r.ok) {
    c.error = !reader.header_error().empty() ? reader.header_error() : r.error;
    return c;
  }
  if (engine.cancelled()) {
    c.error = s.path + ": cancelled";
    return c;
  }
  c.step_ns = tap.step_ns();
  std::vector<std::vector<std::uint64_t>> values = tap.values();
  for (std::size_t i = 0; i < c.series.size(); ++i) c.series[i].value = std::move(values[i]);
  const std::size_t buckets = c.series.front().value.size();
  for (std::size_t b = 0; b < buckets; ++b) c.time_ns.push_back(c.t0 + b * c.step_ns);
  return c;
}

}  // namespace memtrail
