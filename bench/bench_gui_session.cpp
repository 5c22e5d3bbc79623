// Timing of the analyzer Session on a real trace: what memtrail-gui asks of
// it, with the GUI's targets (issue 16) beside each figure.
//
//   bench_gui_session TRACE [REPS [open|nosym]]  (REPS: timed repetitions,
//                              default 5; open: open() only, for perf;
//                              nosym: call trees only, over unsymbolized
//                              frames, where every return address is a
//                              function of its own: the trees' worst case)
//
// open        Session::open, REPS times (the last one is kept); the RSS
//             the first session holds and the peak RSS while it opened
// zoom        series() of every pool's used and reserved series and the
//             process series, 1600 points, at 10 zoom levels from the whole
//             trace down to 1/10^4 of it (centred), REPS times each
// segment map segment_map() of each pool at 20 moments spread over the trace
// breakdown   breakdown() (the summary pies) at the same 20 moments
// range       analyze_range() of the middle 10 % of the trace, REPS times
// call tree   build_call_tree() of the whole trace, bottom-up and top-down,
//             REPS times each (the Call tree and Flame graph tabs), with
//             the trees' node counts and bytes
// caller/callee build_caller_callee() of the whole trace, REPS times (the
//             Caller/Callee tab), with its functions, edges and bytes
// Prints medians and maxima in milliseconds. Not a Google Benchmark: each
// figure is one call the GUI makes, and open() is too slow to repeat often.
// Unlike bench_session (the Session's own costs, no symbols), this opens as
// the GUI does: symbolized, with the symbol cache.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "memtrail/call_tree.hpp"
#include "memtrail/caller_callee.hpp"
#include "memtrail/session.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double ms_of(const std::function<void()>& f) {
  auto t0 = Clock::now();
  f();
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// CPU time of the whole process (every thread) in ms: the figure to trust
// on a shared machine, where wall time waits for other jobs.
double cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty()      ? 0
         : v.size() % 2 ? v[v.size() / 2]
                        : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

double max_of(const std::vector<double>& v) {
  return v.empty() ? 0 : *std::max_element(v.begin(), v.end());
}

// VmRSS or VmHWM of this process in MiB.
double status_mib(const char* field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(field, 0) == 0)
      return std::atof(line.c_str() + std::string(field).size() + 1) / 1024;
  return 0;
}

void report(const char* what, const std::vector<double>& ms, const char* target) {
  std::printf("%-34s median %9.3f ms  max %9.3f ms  (%zu calls)  target %s\n", what, median(ms),
              max_of(ms), ms.size(), target);
}

std::vector<memtrail::SeriesId> zoom_series(const memtrail::Session& s) {
  std::vector<memtrail::SeriesId> ids;
  for (const auto& info : s.series_list()) {
    auto k = info.id.kind;
    if (k == memtrail::SeriesKind::pool_used || k == memtrail::SeriesKind::pool_reserved ||
        k == memtrail::SeriesKind::process_used || k == memtrail::SeriesKind::rss)
      ids.push_back(info.id);
  }
  return ids;
}

// One zoom step redraws the timeline: every series it draws, one call each.
void bench_zoom(const memtrail::Session& s, std::uint64_t t0, std::uint64_t t1, int reps) {
  auto ids = zoom_series(s);
  std::vector<double> all;
  std::printf("zoom: %zu series per step, 1600 points\n", ids.size());
  for (int level = 0; level < 10; ++level) {
    double width = static_cast<double>(t1 - t0) / std::pow(10.0, 4.0 * level / 9);
    std::uint64_t mid = t0 + (t1 - t0) / 2;
    auto half = static_cast<std::uint64_t>(width / 2);
    std::vector<double> ms;
    for (int r = 0; r < reps; ++r)
      ms.push_back(ms_of([&] {
        for (const auto& id : ids) s.series(id, mid - half, mid + half, 1600);
      }));
    std::printf("  level %d (1/%.0f of the trace): median %.3f ms\n", level,
                std::pow(10.0, 4.0 * level / 9), median(ms));
    all.insert(all.end(), ms.begin(), ms.end());
  }
  report("zoom step (all series)", all, "<= 5 ms session, <= 50 ms GUI");
}

void bench_moments(const memtrail::Session& s, std::uint64_t t0, std::uint64_t t1) {
  std::vector<double> maps, pies;
  for (const auto& pool : s.whole().pools) {
    for (int i = 0; i < 20; ++i) {
      std::uint64_t t = t0 + (t1 - t0) / 21 * (i + 1);
      std::string error;
      maps.push_back(
          ms_of([&] { error = s.segment_map(memtrail::PoolId{pool.info.id}, t).error; }));
      if (!error.empty()) std::printf("segment_map(%u): %s\n", pool.info.id, error.c_str());
    }
  }
  for (int i = 0; i < 20; ++i)
    pies.push_back(ms_of([&] { s.breakdown(t0 + (t1 - t0) / 21 * (i + 1)); }));
  report("segment_map at 20 moments per pool", maps, "<= 300 ms");
  report("breakdown at 20 moments", pies, "-");
}

void bench_call_trees(const memtrail::Analysis& a, int reps) {
  using memtrail::TreeDirection;
  for (TreeDirection d : {TreeDirection::bottom_up, TreeDirection::top_down}) {
    std::vector<double> ms;
    memtrail::CallTree tree;
    for (int r = 0; r < reps; ++r) ms.push_back(ms_of([&] { tree = build_call_tree(a, d); }));
    const bool up = d == TreeDirection::bottom_up;
    report(up ? "call tree, bottom-up" : "call tree, top-down", ms, "<= 1000 ms after summary");
    std::printf("%-34s %zu nodes, %zu functions, %.1f MiB\n", "", tree.nodes.size(),
                tree.symbols.size(), static_cast<double>(tree.memory_bytes()) / (1 << 20));
  }
}

// The Caller/Callee tab's build over the same Analysis.
void bench_caller_callee(const memtrail::Analysis& a, int reps) {
  std::vector<double> ms;
  memtrail::CallerCallee cc;
  for (int r = 0; r < reps; ++r) ms.push_back(ms_of([&] { cc = build_caller_callee(a); }));
  report("caller/callee", ms, "<= 1000 ms after summary");
  std::printf("%-34s %zu functions, %zu edges, %.1f MiB\n", "", cc.functions.size(),
              cc.edge_count(), static_cast<double>(cc.memory_bytes()) / (1 << 20));
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc == 4 ? argv[3] : "";
  if (argc < 2 || argc > 4 || (argc >= 3 && std::atoi(argv[2]) < 1) ||
      (argc == 4 && mode != "open" && mode != "nosym")) {
    std::fprintf(stderr, "usage: bench_gui_session TRACE [REPS [open|nosym]]\n");
    return 2;
  }
  const std::string path = argv[1];
  const int reps = argc >= 3 ? std::atoi(argv[2]) : 5;
  if (mode == "nosym") {
    memtrail::AnalysisOptions o;
    o.symbolize = false;
    o.symbol_cache = false;
    const memtrail::Analysis a = memtrail::analyze(path, o);
    std::printf("%s: %zu sites, unsymbolized\n", path.c_str(), a.sites.size());
    const double before = status_mib("VmRSS:");
    bench_call_trees(a, reps);
    std::printf("%-34s %.1f MiB RSS more after the trees\n", "memory",
                status_mib("VmRSS:") - before);
    bench_caller_callee(a, reps);
    return 0;
  }
  double rss_before = status_mib("VmRSS:"), held = 0, peak = 0;
  std::vector<double> opens, open_cpu;
  memtrail::OpenResult r;
  for (int i = 0; i < reps; ++i) {
    r = {};  // drop the previous session first: one in memory at a time
    double cpu0 = cpu_ms();
    opens.push_back(ms_of([&] { r = memtrail::Session::open(path); }));
    open_cpu.push_back(cpu_ms() - cpu0);
    if (!r.session) {
      std::fprintf(stderr, "bench_gui_session: %s: %s\n", memtrail::error_name(r.error),
                   r.message.c_str());
      return 1;
    }
    if (i == 0) {  // later opens reuse what glibc kept of the earlier ones
      held = status_mib("VmRSS:") - rss_before;
      peak = status_mib("VmHWM:");
    }
  }
  const memtrail::Session& s = *r.session;
  const auto& sum = s.whole().summary;
  std::printf("%s: %llu events, %zu sites, %.1f MiB file\n", path.c_str(),
              static_cast<unsigned long long>(sum.events), s.whole().sites.size(),
              static_cast<double>(s.file_bytes()) / (1 << 20));
  report("open", opens, "<= ~1000 ms");
  report("open, CPU time of all threads", open_cpu, "-");
  std::printf(
      "%-34s %.1f MiB RSS held by the first session, peak RSS %.1f MiB while it opened"
      "  target <= 60 MiB\n",
      "memory", held, peak);
  if (mode == "open") return 0;
  std::uint64_t t0 = sum.first_event_ns, t1 = sum.last_event_ns;
  bench_zoom(s, t0, t1, reps);
  bench_moments(s, t0, t1);
  std::vector<double> ranges;
  for (int i = 0; i < reps; ++i)
    ranges.push_back(
        ms_of([&] { s.analyze_range(t0 + (t1 - t0) / 20 * 9, t0 + (t1 - t0) / 20 * 11); }));
  report("analyze_range of 10 %", ranges, "-");
  bench_call_trees(s.whole(), reps);
  bench_caller_callee(s.whole(), reps);
  return 0;
}
