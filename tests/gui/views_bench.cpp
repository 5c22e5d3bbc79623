// Response times of memtrail-gui's Timeline and Fragmentation views on a
// large trace (not a ctest test: figures for docs/BENCHMARKS.md).
//
//   gui_views_bench synth FILE N   writes an N-event trace of a pool with
//                                  segments (64 x 32 MiB) churning blocks
//   gui_views_bench FILE           opens FILE, then times zoom steps of the
//                                  timeline (zoomAt + paint) and segment maps
//                                  at clicked moments (setMoment to painted)
//   gui_views_bench shots FILE DIR  renders DIR/timeline.png and
//                                  DIR/fragmentation.png (docs/gui) from a
//                                  trace of samples/fragmentation
#include <QApplication>
#include <QElapsedTimer>
#include <QtTest>
#include <algorithm>
#include <cstdio>
#include <vector>

#include "fragmentation_view.hpp"
#include "memtrail/trace_file.hpp"
#include "oom_explainer.hpp"
#include "timeline_view.hpp"

using namespace memtrail;

namespace {

constexpr std::uint64_t kSegment = 32ull << 20, kSlot = 64ull << 10;
constexpr std::uint64_t kSegments = 64, kSlots = kSegment / kSlot;

// One thread allocates into a random free 64 KiB slot of a random segment
// and frees a random live one, keeping about half of the slots live.
void synthesize(const char* path, std::uint64_t events) {
  TraceHeader h;
  h.command_line = "gui_views_bench synth";
  TraceWriter w(path, h);
  w.add_thread({1, 1, "t1"});
  w.add_pool({1, 0, "device pool", PoolKind::caching, MemorySpace::device, 0});
  for (std::uint32_t n = 1; n <= 8; ++n) w.add_stack_node({n, n - 1, 0x400000u + 0x40u * n});
  std::uint64_t t = 0, n = 0, rng = 7;
  auto next = [&] { return rng = rng * 6364136223846793005ull + 1442695040888963407ull; };
  for (std::uint64_t s = 0; s < kSegments; ++s, ++n) {
    Event e;
    e.time_ns = t += 50;
    e.thread = 1;
    e.pool = 1;
    e.kind = EventKind::segment_reserve;
    e.address = 0x7f0000000000ull + s * kSegment;
    e.size = kSegment;
    w.add_event(e);
  }
  std::vector<std::uint64_t> live, free_slots;
  for (std::uint64_t i = 0; i < kSegments * kSlots; ++i) free_slots.push_back(i);
  while (n < events) {
    const bool alloc = live.size() < kSegments * kSlots / 2 || (next() >> 40) % 2 == 0;
    std::vector<std::uint64_t>& from = alloc ? free_slots : live;
    std::swap(from[(next() >> 20) % from.size()], from.back());
    const std::uint64_t slot = from.back();
    from.pop_back();
    (alloc ? live : free_slots).push_back(slot);
    Event e;
    e.time_ns = t += 50;
    e.thread = 1;
    e.pool = 1;
    e.stack = 1 + static_cast<std::uint32_t>(slot % 8);
    e.kind = alloc ? EventKind::alloc : EventKind::free;
    e.address = 0x7f0000000000ull + slot * kSlot;
    e.size = e.requested = alloc ? 512 + (next() >> 30) % (kSlot - 512) : 0;
    w.add_event(e);
    ++n;
  }
  w.finish();
}

struct Stats {
  std::vector<double> ms;
  void print(const char* what) {
    std::sort(ms.begin(), ms.end());
    std::printf("%-40s n=%zu median %.1f ms, max %.1f ms\n", what, ms.size(), ms[ms.size() / 2],
                ms.back());
    std::fflush(stdout);
  }
};

int measure(const char* path) {
  QElapsedTimer clock;
  clock.start();
  OpenResult r = Session::open(path);
  if (!r.session) {
    std::fprintf(stderr, "gui_views_bench: %s\n", r.message.c_str());
    return 2;
  }
  std::printf("open: %.0f ms, %llu events\n", clock.nsecsElapsed() / 1e6,
              static_cast<unsigned long long>(r.session->whole().summary.events));
  gui::TimelineView timeline;
  timeline.resize(1600, 900);
  timeline.setSession(r.session);
  (void)timeline.grab();
  const auto [b, e] = timeline.visibleRange();
  Stats zoom_in, zoom_out;
  for (int i = 0; i < 12; ++i) {  // in, around points across the trace, then out
    clock.restart();
    timeline.zoomAt(1.25, b + (e - b) / 13 * static_cast<std::uint64_t>(i + 1));
    (void)timeline.grab();
    zoom_in.ms.push_back(clock.nsecsElapsed() / 1e6);
  }
  for (int i = 0; i < 12; ++i) {
    clock.restart();
    timeline.zoomAt(0.8, b + (e - b) / 2);
    (void)timeline.grab();
    zoom_out.ms.push_back(clock.nsecsElapsed() / 1e6);
  }
  zoom_in.print("timeline zoom step in (zoomAt + paint)");
  zoom_out.print("timeline zoom step out (zoomAt + paint)");
  // Where a step's time goes: the Session's answers, then painting.
  const auto [v0, v1] = timeline.visibleRange();
  const auto width = static_cast<std::size_t>(timeline.plotLayout().plot.width());
  Stats series, blocks, scopes, paint;
  for (int i = 0; i < 5; ++i) {
    clock.restart();
    for (const auto& l : timeline.frame().series) (void)r.session->series(l.info.id, v0, v1, width);
    series.ms.push_back(clock.nsecsElapsed() / 1e6);
    clock.restart();
    (void)r.session->largest_blocks(v0, v1, gui::TimelineModel::kAskedBars);
    blocks.ms.push_back(clock.nsecsElapsed() / 1e6);
    clock.restart();
    (void)r.session->scope_intervals(v0, v1, gui::TimelineModel::kMaxScopes);
    scopes.ms.push_back(clock.nsecsElapsed() / 1e6);
    clock.restart();
    (void)timeline.grab();
    paint.ms.push_back(clock.nsecsElapsed() / 1e6);
  }
  series.print("  of which Session::series (all drawn)");
  blocks.print("  of which Session::largest_blocks");
  scopes.print("  of which Session::scope_intervals");
  paint.print("  of which painting");

  gui::FragmentationView frag;
  frag.resize(1600, 900);
  frag.setSession(r.session);
  if (!QTest::qWaitFor([&] { return frag.isReady(); }, 60000)) return 1;
  Stats map_direct, map_view;
  for (int i = 1; i <= 10; ++i) {
    const std::uint64_t t = b + (e - b) / 11 * static_cast<std::uint64_t>(i);
    clock.restart();
    (void)r.session->segment_map(PoolId{frag.currentPool()}, t);
    map_direct.ms.push_back(clock.nsecsElapsed() / 1e6);
    clock.restart();
    frag.setMoment(t);
    if (!QTest::qWaitFor([&] { return frag.isReady(); }, 60000)) return 1;
    (void)frag.grab();
    map_view.ms.push_back(clock.nsecsElapsed() / 1e6);
  }
  map_direct.print("Session::segment_map");
  map_view.print("fragmentation view: moment to painted");
  return 0;
}

// The moment the first caching pool's 18 MiB blocks are all freed and its
// small ones still pin every segment: what the fragmentation sample is about.
std::uint64_t pinned_moment(const Session& s, std::uint32_t* pool) {
  for (const PoolStats& p : s.whole().pools)
    if (p.info.kind == PoolKind::caching && p.has_segments) {
      *pool = p.info.id;
      break;
    }
  std::uint64_t t = 0;
  for (const BlockLifetime& b : s.largest_blocks(0, kTimeMax, 100000))
    if (b.pool.value == *pool && b.size >= (18ull << 20)) t = std::max(t, b.free_ns);
  return t;
}

int shots(const char* path, const QString& dir) {
  OpenResult r = Session::open(path);
  if (!r.session) {
    std::fprintf(stderr, "gui_views_bench: %s\n", r.message.c_str());
    return 2;
  }
  std::uint32_t pool = 0;
  const std::uint64_t moment = pinned_moment(*r.session, &pool);
  // The sample's pools work for a few ms of a longer run: show that part.
  std::uint64_t t0 = kTimeMax, t1 = 0;
  for (const BlockLifetime& b : r.session->largest_blocks(0, kTimeMax, 100000)) {
    t0 = std::min(t0, b.alloc_ns);
    t1 = std::max(t1, b.free_ns == kTimeMax ? b.alloc_ns : b.free_ns);
  }
  const std::uint64_t margin = (t1 - t0) / 20;
  t0 -= std::min(t0, margin);
  t1 += margin;
  gui::TimelineView timeline;
  timeline.resize(1400, 800);
  timeline.setSession(r.session);
  if (t1 > t0) timeline.setVisibleRange(t0, t1);
  if (moment) timeline.setMoment(moment);
  if (!timeline.grab().save(dir + "/timeline.png")) return 1;

  gui::FragmentationView frag;
  frag.resize(1400, 860);
  frag.setSession(r.session);
  if (t1 > t0) frag.setRange(t0, t1, nullptr);
  frag.selectPool(pool);
  if (moment) frag.setMoment(moment);
  frag.show();
  if (!QTest::qWaitFor([&] { return frag.isReady() && frag.explainer()->isReady(); }, 60000))
    return 1;
  gui::SegmentRows* rows = frag.rows();
  if (!rows->rows().empty())
    QTest::mouseClick(rows, Qt::LeftButton, {}, rows->spanRect(0, 0).center());
  QTest::qWait(100);
  return frag.grab().save(dir + "/fragmentation.png") ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 4 && std::string(argv[1]) == "synth") {
    synthesize(argv[2], std::stoull(argv[3]));
    return 0;
  }
  if (argc != 2 && !(argc == 4 && std::string(argv[1]) == "shots")) {
    std::fprintf(stderr, "usage: gui_views_bench FILE | synth FILE N | shots FILE DIR\n");
    return 2;
  }
  qputenv("QT_QPA_PLATFORM",
          qgetenv("QT_QPA_PLATFORM").isEmpty() ? "offscreen" : qgetenv("QT_QPA_PLATFORM"));
  QApplication app(argc, argv);
  return argc == 4 ? shots(argv[2], QString::fromLocal8Bit(argv[3])) : measure(argv[1]);
}
