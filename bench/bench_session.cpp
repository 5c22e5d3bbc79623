// Analyzer session costs on one trace, for docs/BENCHMARKS.md:
//   bench_session analyze FILE   analyze() alone (the floor), wall time
//   bench_session synth FILE EVENTS STACKS
//                                a churn trace (as bench_analyzer synth: 2
//                                threads, sizes 8 B..64 KiB, half freed at
//                                once, half through a 256-slot ring) over
//                                STACKS distinct call stacks
//   bench_session open FILE      Session::open, then zoom steps (series of
//                                800 points at 12 zooms), segment maps and
//                                breakdowns at 20 moments; wall times
// Run each under `/usr/bin/time -v` for peak memory. No symbols (the same
// in both), so the figures are the pass and the queries.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "memtrail/analysis.hpp"
#include "memtrail/session.hpp"

namespace {

double now_ms() {
  using namespace std::chrono;
  return duration<double, std::milli>(steady_clock::now().time_since_epoch()).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// CPU time of the process, all threads (less noisy than wall on a shared
// machine: the pass runs on two threads).
double cpu_ms() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return (u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e3 +
         (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e3;
}

long peak_rss_kib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

int run_open(const std::string& path, const char* budget) {
  memtrail::SessionOptions o;
  if (budget) o.checkpoint_budget_bytes = std::strtoull(budget, nullptr, 10);
  o.analysis.symbolize = false;
  double t = now_ms(), c = cpu_ms();
  memtrail::OpenResult r = memtrail::Session::open(path, o);
  double open_ms = now_ms() - t, open_cpu = cpu_ms() - c;
  if (!r.session) {
    std::fprintf(stderr, "%s\n", r.message.c_str());
    return 2;
  }
  const memtrail::Session& s = *r.session;
  long rss_after_open = peak_rss_kib();
  std::uint64_t t0 = s.whole().summary.first_event_ns, t1 = s.whole().summary.last_event_ns;
  std::vector<double> zoom;
  for (const memtrail::SeriesInfo& info : s.series_list())
    for (int z = 0; z < 12; ++z) {
      std::uint64_t span = std::max<std::uint64_t>(1, (t1 - t0) >> (z * 2));
      std::uint64_t a = t0 + (t1 - t0 - std::min(span, t1 - t0)) / 2;
      double q = now_ms();
      memtrail::Envelope e = s.series(info.id, a, a + span, 800);
      zoom.push_back(now_ms() - q);
      if (e.min.size() != 800) return 3;
    }
  std::vector<double> maps, breakdowns;
  std::uint32_t pool = s.whole().pools.empty() ? 0 : s.whole().pools[0].info.id;
  for (int i = 1; i <= 20; ++i) {
    std::uint64_t at = t0 + (t1 - t0) / 21 * static_cast<std::uint64_t>(i);
    double q = now_ms();
    memtrail::SegmentMap m = s.segment_map(memtrail::PoolId{pool}, at);
    maps.push_back(now_ms() - q);
    if (!m.error.empty()) {
      std::fprintf(stderr, "%s\n", m.error.c_str());
      return 2;
    }
    q = now_ms();
    auto b = s.breakdown(at);
    breakdowns.push_back(now_ms() - q);
  }
  std::printf(
      "open_ms %.0f  cpu_ms %.0f  events %llu  chunks %llu  series %zu  zoom_ms median %.3f max "
      "%.3f  segment_map_ms "
      "median %.1f max %.1f  breakdown_ms median %.1f  peak_rss_after_open_mib %.1f  "
      "peak_rss_mib %.1f\n",
      open_ms, open_cpu, static_cast<unsigned long long>(s.whole().read.events),
      static_cast<unsigned long long>(s.whole().read.chunks), s.series_list().size(), median(zoom),
      *std::max_element(zoom.begin(), zoom.end()), median(maps),
      *std::max_element(maps.begin(), maps.end()), median(breakdowns), rss_after_open / 1024.0,
      peak_rss_kib() / 1024.0);
  return 0;
}

void synthesize(const std::string& path, std::uint64_t events, std::uint32_t stacks) {
  memtrail::TraceHeader h;
  h.command_line = "bench_session synth";
  memtrail::TraceWriter w(path, h);
  w.add_thread({1, 1, "t1"});
  w.add_thread({2, 2, "t2"});
  w.add_pool({1, 0, "malloc", memtrail::PoolKind::heap, memtrail::MemorySpace::host, -1});
  // 64 trunks of depth 6, then one distinct leaf frame per stack.
  std::uint32_t next = 1, trunk[64];
  for (std::uint32_t i = 0; i < 64; ++i) {
    std::uint32_t parent = 0;
    for (std::uint32_t d = 0; d < 6; ++d) {
      w.add_stack_node({next, parent, 0x400000u + 0x40u * (d * 64 + i)});
      parent = next++;
    }
    trunk[i] = parent;
  }
  std::vector<std::uint32_t> leaf(stacks);
  for (std::uint32_t i = 0; i < stacks; ++i) {
    w.add_stack_node({next, trunk[i % 64], 0x800000u + 0x10u * i});
    leaf[i] = next++;
  }
  std::uint64_t rng = 42, ring[2][256] = {}, t = 0, addr = 0x10000000, slot[2] = {0, 0}, n = 0;
  while (n < events)
    for (std::uint32_t th = 1; th <= 2 && n < events; ++th) {
      rng = rng * 6364136223846793005ull + 1442695040888963407ull;
      memtrail::Event a;
      a.time_ns = t += 50;
      a.thread = th;
      a.pool = 1;
      a.stack = leaf[(rng >> 20) % stacks];
      a.kind = memtrail::EventKind::alloc;
      a.address = addr += 0x40;
      a.size = a.requested = std::uint64_t{1} << (3 + (rng >> 33) % 14);
      w.add_event(a);
      ++n;
      memtrail::Event f = a;
      f.time_ns = t += 50;
      f.kind = memtrail::EventKind::free;
      f.stack = 0;
      f.size = f.requested = 0;
      std::uint64_t& s = ring[th - 1][slot[th - 1]];
      if ((n & 2) != 0) {
        f.address = s;
        s = a.address;
        slot[th - 1] = (slot[th - 1] + 1) % 256;
      }
      if (f.address != 0 && n < events) {
        w.add_event(f);
        ++n;
      }
    }
  w.finish();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 5 && std::string(argv[1]) == "synth") {
    synthesize(argv[2], std::strtoull(argv[3], nullptr, 10),
               static_cast<std::uint32_t>(std::max(1ull, std::strtoull(argv[4], nullptr, 10))));
    return 0;
  }
  if (argc != 3 && argc != 4) {
    std::fprintf(stderr, "usage: bench_session analyze|open FILE [CHECKPOINT_BUDGET_BYTES]\n");
    return 2;
  }
  std::string mode = argv[1], path = argv[2];
  if (mode == "open") return run_open(path, argc == 4 ? argv[3] : nullptr);
  if (mode != "analyze") {
    std::fprintf(stderr, "bench_session: unknown mode '%s' (analyze or open)\n", mode.c_str());
    return 2;
  }
  memtrail::AnalysisOptions o;
  o.symbolize = false;
  double t = now_ms(), c = cpu_ms();
  memtrail::Analysis a = memtrail::analyze(path, o);
  if (!a.error.empty()) {
    std::fprintf(stderr, "%s\n", a.error.c_str());
    return 2;
  }
  std::printf("analyze_ms %.0f  cpu_ms %.0f  events %llu  peak_rss_mib %.1f\n", now_ms() - t,
              cpu_ms() - c, static_cast<unsigned long long>(a.read.events),
              peak_rss_kib() / 1024.0);
  return 0;
}
