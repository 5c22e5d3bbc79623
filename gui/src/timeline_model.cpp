#include "timeline_model.hpp"

#include <algorithm>

#include "chart_axes.hpp"

namespace memtrail::gui {
namespace {

bool has_series(const std::vector<SeriesInfo>& all, SeriesId id) {
  return std::any_of(all.begin(), all.end(), [&](const SeriesInfo& s) { return s.id == id; });
}

QString series_name(const std::vector<SeriesInfo>& all, SeriesId id) {
  for (const auto& s : all)
    if (s.id == id) return QString::fromStdString(s.name);
  return {};
}

}  // namespace

QString pool_label(const Analysis& a, PoolId pool) {
  const PoolStats* p = a.pool(pool);
  if (!p) return QStringLiteral("pool %1").arg(pool.value);
  const auto same = std::count_if(a.pools.begin(), a.pools.end(),
                                  [&](const PoolStats& q) { return q.info.name == p->info.name; });
  const QString name = QString::fromStdString(p->info.name);
  return same > 1 ? QStringLiteral("%1 #%2").arg(name).arg(pool.value) : name;
}

QColor pool_color(std::size_t i) {
  // Tableau 10: distinct hues that stay readable as fills and as lines.
  static const QColor kPalette[] = {QColor(0x4e, 0x79, 0xa7), QColor(0xf2, 0x8e, 0x2b),
                                    QColor(0x59, 0xa1, 0x4f), QColor(0xb0, 0x7a, 0xa1),
                                    QColor(0x76, 0xb7, 0xb2), QColor(0xed, 0xc9, 0x48),
                                    QColor(0x9c, 0x75, 0x5f), QColor(0xff, 0x9d, 0xa7),
                                    QColor(0xe1, 0x57, 0x59), QColor(0xba, 0xb0, 0xac)};
  return kPalette[i % std::size(kPalette)];
}

void TimelineModel::setSession(std::shared_ptr<const Session> session) {
  session_ = std::move(session);
  layers_.clear();
  begin_ = end_ = 0;
  if (!session_) return;
  const Analysis& a = session_->whole();
  begin_ = a.summary.first_event_ns;
  end_ = std::max(a.summary.last_event_ns, begin_ + 1);
  const auto all = session_->series_list();
  // Leaf pools' used bytes stack up to the process's used bytes (an
  // upstream's "used" is its children's segments: counted once, as the
  // analyzer does).
  for (std::size_t i = 0; i < a.pools.size(); ++i) {
    const PoolStats& p = a.pools[i];
    SeriesId used{SeriesKind::pool_used, PoolId{p.info.id}};
    if (p.upstream || !has_series(all, used)) continue;
    layers_.push_back(
        {{used, {}}, pool_label(a, PoolId{p.info.id}) + " used", true, pool_color(i), {}, {}});
  }
  for (std::size_t i = 0; i < a.pools.size(); ++i) {
    const PoolStats& p = a.pools[i];
    SeriesId reserved{SeriesKind::pool_reserved, PoolId{p.info.id}};
    // An upstream's segments are the leaf pool's reserve seen one level down
    // (expandable segments map them in both): drawn once, at the leaf.
    if (p.upstream || !p.has_segments || !has_series(all, reserved)) continue;
    layers_.push_back({{reserved, {}},
                       pool_label(a, PoolId{p.info.id}) + " reserved",
                       false,
                       pool_color(i).darker(150),
                       {},
                       {}});
  }
  const std::pair<SeriesKind, QColor> process[] = {
      {SeriesKind::rss, QColor(0x33, 0x33, 0x33)},
      {SeriesKind::heap_reserved, QColor(0x8c, 0x56, 0x4b)}};
  for (const auto& [kind, color] : process) {
    SeriesId id{kind, {}};
    if (has_series(all, id))
      layers_.push_back({{id, {}}, series_name(all, id), false, color, {}, {}});
  }
  for (auto& l : layers_) l.info.name = l.label.toStdString();
  makeColorsDistinct();
}

void TimelineModel::setHidden(std::size_t i, bool hidden) {
  if (i < layers_.size()) layers_[i].hidden = hidden;
}

// The palette repeats after 10 pools and the process lines have fixed
// colours: a colour too close to an earlier series' turns its hue until no
// two series look alike.
void TimelineModel::makeColorsDistinct() {
  auto close = [](const QColor& a, const QColor& b) {
    const int dr = a.red() - b.red(), dg = a.green() - b.green(), db = a.blue() - b.blue();
    return dr * dr + dg * dg + db * db < 40 * 40;
  };
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    QColor& c = layers_[i].color;
    for (int turn = 0; turn < 24; ++turn) {
      const bool clash =
          std::any_of(layers_.begin(), layers_.begin() + static_cast<std::ptrdiff_t>(i),
                      [&](const TimelineSeries& o) { return close(o.color, c); });
      if (!clash) break;
      const int hue = c.hsvHue() < 0 ? 0 : c.hsvHue();
      c = QColor::fromHsv((hue + 37) % 360, std::max(c.hsvSaturation(), 90),
                          turn % 2 ? std::min(255, c.value() + 40) : std::max(60, c.value() - 30));
    }
  }
}

TimelineFrame TimelineModel::compute(std::uint64_t t0, std::uint64_t t1, int width,
                                     int max_lanes) const {
  TimelineFrame f;
  f.t0 = t0;
  f.t1 = t1;
  f.width = std::max(width, 1);
  if (!session_) return f;
  const auto points = static_cast<std::size_t>(f.width);
  std::vector<std::uint64_t> stack_top(points, 0);
  for (const auto& layer : layers_) {
    TimelineSeries s = layer;
    if (s.hidden) {  // in the legend only
      f.series.push_back(std::move(s));
      continue;
    }
    s.envelope = session_->series(layer.info.id, t0, t1, points);
    const std::size_t n = std::min(points, s.envelope.max.size());
    if (s.stacked) {
      s.base.assign(stack_top.begin(), stack_top.begin() + static_cast<std::ptrdiff_t>(n));
      for (std::size_t i = 0; i < n; ++i)
        if (s.envelope.has_data[i]) stack_top[i] += s.envelope.max[i];
    } else {
      for (std::size_t i = 0; i < n; ++i)
        if (s.envelope.has_data[i]) f.y_max = std::max(f.y_max, s.envelope.max[i]);
    }
    f.series.push_back(std::move(s));
  }
  for (std::uint64_t top : stack_top) f.y_max = std::max(f.y_max, top);
  f.y_top = axis_top_with_headroom(f.y_max);

  // An upstream's blocks are the segments of the pool above it (drawn as
  // that pool's reserved line): bars show the blocks programs asked for.
  const Analysis& a = session_->whole();
  for (const auto& b : session_->largest_blocks(t0, t1, kAskedBars)) {
    const PoolStats* pool = a.pool(b.pool);
    if (!(pool && pool->upstream) && f.bars.size() < kMaxBars) f.bars.push_back({b, -1});
  }
  placeBars(f, max_lanes);
  for (const auto& m : a.marks)
    if (m.time_ns >= t0 && m.time_ns <= t1) f.marks.push_back(m);
  f.scopes = session_->scope_intervals(t0, t1, kMaxScopes);
  return f;
}

// Largest blocks first, each into the first lane where it overlaps no bar
// already there (in pixels, one pixel apart): lane 0, at the top, holds the
// largest block, so a bar's height in the area ranks its size.
void TimelineModel::placeBars(TimelineFrame& f, int max_lanes) const {
  std::vector<std::size_t> order(f.bars.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
    return f.bars[x].block.size > f.bars[y].block.size;
  });
  const double span = static_cast<double>(f.t1 - f.t0 ? f.t1 - f.t0 : 1);
  auto px = [&](std::uint64_t t) {
    t = std::clamp(t, f.t0, f.t1);
    return static_cast<int>(static_cast<double>(t - f.t0) / span * f.width);
  };
  std::vector<std::vector<std::pair<int, int>>> lanes;
  for (std::size_t i : order) {
    TimelineBar& bar = f.bars[i];
    f.lane_max_size = std::max(f.lane_max_size, bar.block.size);
    const int x0 = px(bar.block.alloc_ns), x1 = px(bar.block.free_ns);
    for (std::size_t lane = 0; lane <= lanes.size(); ++lane) {
      if (lane == lanes.size()) {
        if (static_cast<int>(lane) >= max_lanes) break;
        lanes.emplace_back();
      }
      auto& used = lanes[lane];
      bool clash = std::any_of(used.begin(), used.end(), [&](const auto& r) {
        return x0 <= r.second + 1 && r.first <= x1 + 1;
      });
      if (clash) continue;
      used.emplace_back(x0, x1);
      bar.lane = static_cast<int>(lane);
      break;
    }
  }
  f.lanes = static_cast<int>(lanes.size());
}

}  // namespace memtrail::gui
