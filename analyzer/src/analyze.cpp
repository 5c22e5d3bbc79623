// analyze() and segment_map_at(): the CLI's run of the analysis pass
// (analysis_pass.hpp) with the parallel reader and the module preloader.
#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <thread>

#include "analysis_pass.hpp"
#include "engine.hpp"
#include "memtrail/analysis.hpp"
#include "module_preloader.hpp"

namespace memtrail {

std::uint64_t Analysis::lost_event_count() const {
  std::uint64_t n = 0;
  for (const LostEvents& l : lost_events) n += l.count;
  return n;
}

const PoolStats* Analysis::pool(PoolId id) const {
  for (const auto& p : pools)
    if (p.info.id == id.value) return &p;
  return nullptr;
}

const PoolStats* Analysis::pool_by_name(const std::string& name) const {
  for (const auto& p : pools)
    if (p.info.name == name) return &p;
  return nullptr;
}

std::vector<std::uint64_t> Analysis::stack_ips(StackId stack) const {
  std::vector<std::uint64_t> ips;
  for_each_stack_ip(stack, [&](std::uint64_t ip) { ips.push_back(ip); });
  return ips;
}

std::vector<SiteId> top_sites(const Analysis& a, SiteOrder order, std::size_t n) {
  auto key = [order](const Site& s) -> std::uint64_t {
    switch (order) {
      case SiteOrder::calls:
        return s.calls;
      case SiteOrder::bytes:
        return s.bytes_allocated;
      case SiteOrder::peak:
        return s.peak_bytes;
      case SiteOrder::temporaries:
        return s.temporaries;
      case SiteOrder::leaked:
        return s.leaked.bytes;
    }
    return 0;
  };
  std::vector<bool> upstream;
  for (const PoolStats& p : a.pools)
    if (p.upstream) {
      if (p.info.id >= upstream.size()) upstream.resize(p.info.id + 1);
      upstream[p.info.id] = true;
    }
  std::vector<SiteId> idx;
  for (std::uint32_t i = 0; i < a.sites.size(); ++i) {
    const Site& s = a.sites[i];
    if (key(s) > 0 && !(s.pool.value < upstream.size() && upstream[s.pool.value]))
      idx.push_back(SiteId{i});
  }
  auto better = [&](SiteId x, SiteId y) {
    std::uint64_t kx = key(at(a.sites, x)), ky = key(at(a.sites, y));
    return kx != ky ? kx > ky : x < y;
  };
  if (n != 0 && idx.size() > n) {
    std::partial_sort(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(n), idx.end(), better);
    idx.resize(n);
  } else {
    std::sort(idx.begin(), idx.end(), better);
  }
  return idx;
}

// Threads that decode chunks ahead of the analysis (read_parallel), or 0 for
// the one-thread pipeline (read_pipelined). Chunk-parallel decoding buffers
// whole decoded chunks: it costs more CPU and ~40 MiB, and pays only where
// cores are spare; on the 2-vCPU reference machine it measured slower than
// the pipeline (docs/BENCHMARKS.md). MEMTRAIL_DECODERS overrides (0..8); any
// other value is an error naming it, not a silent default.
std::optional<unsigned> decoder_threads(std::string* error) {
  const char* env = std::getenv("MEMTRAIL_DECODERS");
  if (!env || !*env) return std::thread::hardware_concurrency() >= 4 ? 2 : 0;
  unsigned n = 0;
  const char* end = env + std::strlen(env);
  auto [rest, ec] = std::from_chars(env, end, n);
  if (ec != std::errc() || rest != end || n > 8) {
    *error = "MEMTRAIL_DECODERS='" + std::string(env) +
             "': expected a number of decoder threads from 0 to 8 (0 = the pipeline)";
    return std::nullopt;
  }
  return n;
}

Analysis analyze(const std::string& path, const AnalysisOptions& options,
                 const ProgressFn& progress) {
  Analysis a;
  a.path = path;
  a.options = options;
  std::optional<unsigned> decoders = decoder_threads(&a.error);
  if (!decoders) return a;
  TraceReader reader(path);
  detail::PassOptions pass;
  pass.analysis = options;
  pass.engine_progress = progress;
  pass.decoders = *decoders;
  pass.preload_modules = detail::worth_preloading(path, options);
  detail::run_analysis_pass(reader, path, pass, a);
  return a;
}

SegmentMap segment_map_at(const std::string& path, PoolId pool, std::uint64_t time_ns) {
  TraceReader reader(path);
  AnalysisOptions options;
  options.timeline_points = 16;
  detail::Engine engine(options, {});
  engine.stop_after(time_ns);
  ReadResult r = reader.read(engine);
  SegmentMap m;
  if (!reader.header_error().empty()) {
    m.error = reader.header_error();
    return m;
  }
  if (!r.ok) {
    m.error = r.error;
    return m;
  }
  m = engine.segment_map(pool.value);
  m.time_ns = time_ns;
  m.fragmentation.time_ns = time_ns;
  return m;
}

}  // namespace memtrail
