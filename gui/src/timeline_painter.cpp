#include "timeline_painter.hpp"

#include <QPolygonF>
#include <algorithm>
#include <cmath>

#include "timeline_axis.hpp"

namespace memtrail::gui {
namespace {

constexpr int kMargin = 8;
constexpr int kLegendRow = 18;
constexpr int kSwatch = 12;
constexpr int kScopeBand = 13;  // per nesting depth: a 12 px band, room for a label
constexpr int kScopeDepths = 4;
constexpr int kMaxLane = 14;

int legend_entry_width(const QFontMetrics& fm, const TimelineSeries& s) {
  return kSwatch + 4 + fm.horizontalAdvance(s.label) + 16;
}

double x_of(const TimelineFrame& f, const QRect& plot, std::uint64_t t) {
  const double span = static_cast<double>(f.t1 > f.t0 ? f.t1 - f.t0 : 1);
  const double clamped = static_cast<double>(std::clamp(t, f.t0, f.t1) - f.t0);
  return plot.left() + clamped / span * plot.width();
}

double y_of(const TimelineFrame& f, const QRect& plot, std::uint64_t v) {
  const double top = static_cast<double>(std::max<std::uint64_t>(f.y_top, 1));
  return plot.bottom() + 1 - static_cast<double>(v) / top * plot.height();
}

void paint_byte_axis(QPainter& p, const TimelineFrame& f, const TimelineLayout& l) {
  const int max_ticks = std::max(2, l.plot.height() / 40);
  for (const Tick& t : byte_ticks(f.y_top, max_ticks)) {
    const int y = static_cast<int>(std::lround(y_of(f, l.plot, t.value)));
    p.setPen(QColor(0xe6, 0xe6, 0xe6));
    p.drawLine(l.plot.left(), y, l.plot.right(), y);
    p.setPen(Qt::black);
    p.drawText(QRect(0, y - 8, l.label_width - 6, 16), Qt::AlignRight | Qt::AlignVCenter, t.label);
  }
}

void paint_time_axis(QPainter& p, const TimelineFrame& f, const TimelineLayout& l) {
  const int max_ticks = std::max(2, l.plot.width() / 110);
  p.setPen(Qt::black);
  p.drawLine(l.plot.left(), l.axis.top(), l.plot.right(), l.axis.top());
  for (const Tick& t : time_ticks(f.t0, f.t1, max_ticks)) {
    const int x = static_cast<int>(std::lround(x_of(f, l.plot, t.value)));
    p.setPen(QColor(0xee, 0xee, 0xee));
    p.drawLine(x, l.plot.top(), x, l.bars.bottom());
    p.setPen(Qt::black);
    p.drawLine(x, l.axis.top(), x, l.axis.top() + 4);
    p.drawText(QRect(x - 60, l.axis.top() + 4, 120, l.axis.height() - 4),
               Qt::AlignHCenter | Qt::AlignTop, t.label);
  }
}

// One pixel column per bucket, filled from bottom(i) up to top(i); runs of
// equal columns as one rectangle. (A polygon of the same outline costs the
// raster engine ~100 ms on a jagged 1500-column series: every scanline
// crosses hundreds of edges.)
template <typename Top, typename Bottom>
void fill_band(QPainter& p, const TimelineFrame& f, const QRect& plot, std::size_t n, Top top,
               Bottom bottom, const QColor& color) {
  std::size_t i = 0;
  while (i < n) {
    const std::uint64_t hi = top(i), lo = bottom(i);
    std::size_t j = i + 1;
    while (j < n && top(j) == hi && bottom(j) == lo) ++j;
    if (hi > lo) {
      const int y_hi = static_cast<int>(std::lround(y_of(f, plot, hi)));
      const int y_lo = static_cast<int>(std::lround(y_of(f, plot, lo)));
      if (y_lo > y_hi)
        p.fillRect(
            QRect(plot.left() + static_cast<int>(i), y_hi, static_cast<int>(j - i), y_lo - y_hi),
            color);
    }
    i = j;
  }
}

// A stacked area: solid up to the bucket's minimum, lighter up to its
// maximum, so a zoomed-out view still shows how far the value swung.
void paint_area(QPainter& p, const TimelineFrame& f, const QRect& plot, const TimelineSeries& s) {
  const Envelope& e = s.envelope;
  const std::size_t n = std::min(s.base.size(), e.max.size());
  auto lo = [&](std::size_t i) { return s.base[i] + (e.has_data[i] ? e.min[i] : 0); };
  auto hi = [&](std::size_t i) { return s.base[i] + (e.has_data[i] ? e.max[i] : 0); };
  auto base = [&](std::size_t i) { return s.base[i]; };
  // Opaque (the colour over white): blending every pixel costs more.
  const QColor light =
      QColor::fromRgbF(0.57f + 0.43f * s.color.redF(), 0.57f + 0.43f * s.color.greenF(),
                       0.57f + 0.43f * s.color.blueF());
  fill_band(p, f, plot, n, hi, lo, light);
  fill_band(p, f, plot, n, lo, base, s.color);
}

void paint_line(QPainter& p, const TimelineFrame& f, const QRect& plot, const TimelineSeries& s) {
  const Envelope& e = s.envelope;
  p.setPen(QPen(s.color, 1.5));
  QPolygonF line;
  auto flush = [&] {
    if (line.size() > 1) p.drawPolyline(line);
    line.clear();
  };
  for (std::size_t i = 0; i < e.max.size(); ++i) {
    if (!e.has_data[i]) {
      flush();
      continue;
    }
    const double x = plot.left() + static_cast<double>(i);
    const double top = y_of(f, plot, e.max[i]), bottom = y_of(f, plot, e.min[i]);
    line << QPointF(x, top) << QPointF(x + 1, top);
    if (bottom - top >= 1) p.drawLine(QPointF(x + 0.5, top), QPointF(x + 0.5, bottom));
  }
  flush();
}

// Marks as dashed lines, labels in two staggered rows, dropped where they
// would overlap their neighbour.
void paint_marks(QPainter& p, const TimelineFrame& f, const TimelineLayout& l) {
  const QFontMetrics fm = p.fontMetrics();
  int row_end[2] = {-1000000, -1000000};
  for (const Mark& m : f.marks) {
    const int x = static_cast<int>(std::lround(x_of(f, l.plot, m.time_ns)));
    p.setPen(QPen(QColor(0x55, 0x55, 0x55), 1, Qt::DashLine));
    p.drawLine(x, l.plot.top(), x, l.bars.bottom());
    const QString text = fm.elidedText(QString::fromStdString(m.text), Qt::ElideRight, 140);
    const int w = fm.horizontalAdvance(text) + 6;
    for (int row = 0; row < 2; ++row) {
      if (x + 3 <= row_end[row]) continue;
      const QRect box(x + 3, l.plot.top() + 2 + row * (fm.height() + 2), w, fm.height());
      p.fillRect(box, QColor(255, 255, 255, 210));
      p.setPen(QColor(0x33, 0x33, 0x33));
      p.drawText(box, Qt::AlignLeft | Qt::AlignVCenter, text);
      row_end[row] = box.right() + 4;
      break;
    }
  }
}

QFont scope_label_font(const QFont& base) {
  QFont f = base;
  f.setPixelSize(kScopeBand - 3);
  return f;
}

// The band's colour is the scope's; its label is white or black, whichever
// reads on it.
QColor label_color_on(const QColor& band) {
  return band.lightness() > 140 ? QColor(Qt::black) : QColor(Qt::white);
}

void paint_scopes(QPainter& p, const TimelineFrame& f, const TimelineLayout& l,
                  const Analysis& whole) {
  const QFont saved = p.font();
  p.setFont(scope_label_font(saved));
  const QFontMetrics fm = p.fontMetrics();
  for (std::size_t i = 0; i < f.scopes.size(); ++i) {
    const QRect r = scope_band_rect(f, l, i);
    if (r.isEmpty()) continue;
    const QColor c = pool_color(f.scopes[i].scope + 3);
    p.fillRect(r, c);
    const QString label = scope_band_label(f, l, fm, i, whole);
    if (label.isEmpty()) continue;
    p.setPen(label_color_on(c));
    p.drawText(r.adjusted(3, 0, -2, 0), Qt::AlignLeft | Qt::AlignVCenter, label);
  }
  p.setFont(saved);
}

int pool_index(const Analysis& a, PoolId pool) {
  for (std::size_t i = 0; i < a.pools.size(); ++i)
    if (a.pools[i].info.id == pool.value) return static_cast<int>(i);
  return 0;
}

// A block's bar takes its pool's colour in the legend (its used area).
QColor bar_color(const TimelineFrame& f, const Analysis& a, PoolId pool) {
  for (const TimelineSeries& s : f.series)
    if (s.info.id.kind == SeriesKind::pool_used && s.info.id.pool == pool) return s.color;
  return pool_color(static_cast<std::size_t>(pool_index(a, pool)));
}

void paint_bars(QPainter& p, const TimelineFrame& f, const TimelineLayout& l, const Analysis& a) {
  p.setPen(QColor(0x88, 0x88, 0x88));
  p.drawText(QRect(0, l.bars.top(), l.label_width - 6, 16), Qt::AlignRight | Qt::AlignTop,
             QStringLiteral("largest"));
  p.drawText(QRect(0, l.bars.top() + 14, l.label_width - 6, 16), Qt::AlignRight | Qt::AlignTop,
             QStringLiteral("blocks"));
  const QFontMetrics fm = p.fontMetrics();
  if (f.bars.empty()) {  // the session keeps lifetimes of large blocks only
    p.drawText(l.bars, Qt::AlignCenter,
               QStringLiteral("No block of %1 or more lives in this range.")
                   .arg(format_bytes(a.options.large_block_bytes)));
    return;
  }
  for (std::size_t i = 0; i < f.bars.size(); ++i) {
    const QRect r = bar_rect(f, l, i);
    if (r.isEmpty()) continue;
    const QColor c = bar_color(f, a, f.bars[i].block.pool);
    p.fillRect(r, c);
    const QString size = format_bytes(f.bars[i].block.size);
    if (r.height() >= fm.height() - 2 && r.width() > fm.horizontalAdvance(size) + 6) {
      p.setPen(Qt::white);
      p.drawText(r.adjusted(3, 0, 0, 0), Qt::AlignLeft | Qt::AlignVCenter, size);
    }
  }
}

// A hidden series keeps its entry, greyed with an empty swatch.
void paint_legend(QPainter& p, const TimelineFrame& f, const TimelineLayout& l) {
  const std::vector<QRect> rects = legend_rects(p.fontMetrics(), l, f.series);
  for (std::size_t i = 0; i < f.series.size(); ++i) {
    const TimelineSeries& s = f.series[i];
    const int x = rects[i].left(), y = rects[i].top(), w = rects[i].width();
    const QRect swatch(x, y + (kLegendRow - kSwatch) / 2, kSwatch, kSwatch);
    const QRect mark =
        s.stacked ? swatch : swatch.adjusted(0, kSwatch / 2 - 1, 0, -kSwatch / 2 + 1);
    if (s.hidden) {
      p.setPen(s.color);
      p.setBrush(Qt::NoBrush);
      p.drawRect(mark.adjusted(0, 0, -1, -1));
    } else {
      p.fillRect(mark, s.color);
    }
    p.setPen(s.hidden ? QColor(0xa0, 0xa0, 0xa0) : QColor(Qt::black));
    p.drawText(QRect(x + kSwatch + 4, y, w, kLegendRow), Qt::AlignLeft | Qt::AlignVCenter, s.label);
  }
}

void paint_overlay(QPainter& p, const TimelineFrame& f, const TimelineLayout& l,
                   const TimelineOverlay& o) {
  const int top = l.plot.top(), bottom = l.bars.bottom();
  if (o.highlight) {
    const double x0 = x_of(f, l.plot, o.highlight->first),
                 x1 = x_of(f, l.plot, o.highlight->second);
    p.setPen(QPen(QColor(0xd0, 0x90, 0x00), 1));
    p.drawLine(QPointF(x0, top), QPointF(x0, bottom));
    p.drawLine(QPointF(x1, top), QPointF(x1, bottom));
  }
  if (o.moment && *o.moment >= f.t0 && *o.moment <= f.t1) {
    const double x = x_of(f, l.plot, *o.moment);
    p.setPen(QPen(QColor(0xd6, 0x27, 0x28), 2));
    p.drawLine(QPointF(x, top), QPointF(x, bottom));
  }
  if (o.rubber_band) {
    const int x0 = std::min(o.rubber_band->first, o.rubber_band->second);
    const int x1 = std::max(o.rubber_band->first, o.rubber_band->second);
    p.setPen(QColor(0x1f, 0x5f, 0xbf));
    p.setBrush(QColor(0x1f, 0x5f, 0xbf, 50));
    p.drawRect(QRect(x0, top, x1 - x0, bottom - top));
  }
}

// The range outside the selection is dimmed, so the selection reads as the
// bright part.
void paint_dim_outside(QPainter& p, const TimelineFrame& f, const TimelineLayout& l,
                       const TimelineOverlay& o) {
  if (!o.highlight) return;
  const QColor dim(0, 0, 0, 28);
  const double x0 = x_of(f, l.plot, o.highlight->first), x1 = x_of(f, l.plot, o.highlight->second);
  const double top = l.plot.top(), h = l.bars.bottom() - top;
  p.fillRect(QRectF(l.plot.left(), top, x0 - l.plot.left(), h), dim);
  p.fillRect(QRectF(x1, top, l.plot.right() + 1 - x1, h), dim);
}

}  // namespace

TimelineLayout layout_timeline(const QSize& size, const QFontMetrics& fm,
                               const std::vector<TimelineSeries>& layers) {
  TimelineLayout l;
  l.label_width = fm.horizontalAdvance(QStringLiteral("1023.5 MiB")) + 10;
  const int left = l.label_width, right = size.width() - kMargin;
  int rows = 1, x = left;
  for (const auto& s : layers) {
    const int w = legend_entry_width(fm, s);
    if (x + w > right && x > left) {
      ++rows;
      x = left;
    }
    x += w;
  }
  l.legend = QRect(left, kMargin, std::max(1, right - left), rows * kLegendRow);
  const int axis_h = fm.height() + 8;
  const int top = l.legend.bottom() + 6;
  const int bottom = size.height() - axis_h;
  const int avail = std::max(40, bottom - top);
  const int scopes_h = kScopeDepths * kScopeBand + 4;
  const int plot_h = std::max(20, (avail - scopes_h) * 62 / 100);
  l.plot = QRect(left, top, std::max(1, right - left), plot_h);
  l.scopes = QRect(left, l.plot.bottom() + 3, l.plot.width(), scopes_h);
  l.bars = QRect(left, l.scopes.bottom() + 1, l.plot.width(),
                 std::max(10, bottom - l.scopes.bottom() - 3));
  l.axis = QRect(left, l.bars.bottom() + 2, l.plot.width(), axis_h);
  return l;
}

std::vector<QRect> legend_rects(const QFontMetrics& fm, const TimelineLayout& l,
                                const std::vector<TimelineSeries>& series) {
  std::vector<QRect> rects;
  int x = l.legend.left(), y = l.legend.top();
  for (const TimelineSeries& s : series) {
    const int w = legend_entry_width(fm, s);
    if (x + w > l.legend.right() && x > l.legend.left()) {
      x = l.legend.left();
      y += kLegendRow;
    }
    rects.emplace_back(x, y, w, kLegendRow);
    x += w;
  }
  return rects;
}

QRect scope_band_rect(const TimelineFrame& f, const TimelineLayout& l, std::size_t i) {
  const ScopeInterval& s = f.scopes.at(i);
  if (s.depth >= kScopeDepths) return {};
  // Whole pixels from the visible part, so that a label is placed where the
  // band is seen even when the entry began before the view.
  const int x0 = static_cast<int>(std::floor(x_of(f, l.plot, s.begin_ns)));
  const int x1 = static_cast<int>(std::ceil(x_of(f, l.plot, s.end_ns)));
  // A 1 px gap on the right keeps back-to-back entries of a loop apart.
  const int w = x1 - x0 >= 3 ? x1 - x0 - 1 : std::max(1, x1 - x0);
  return QRect(x0, l.scopes.top() + static_cast<int>(s.depth) * kScopeBand, w, kScopeBand - 1);
}

QString scope_name(const Analysis& whole, std::uint32_t scope) {
  for (const ScopeStats& st : whole.scopes)
    if (st.info.id == scope) return QString::fromStdString(st.info.name);
  return QStringLiteral("scope %1").arg(scope);
}

QString scope_band_label(const TimelineFrame& f, const TimelineLayout& l, const QFontMetrics& fm,
                         std::size_t i, const Analysis& whole) {
  const int room = scope_band_rect(f, l, i).width() - 5;
  const ScopeInterval& s = f.scopes.at(i);
  const QString number = QStringLiteral("#%1").arg(s.entry);
  const QString full = scope_name(whole, s.scope) + QLatin1Char(' ') + number;
  if (fm.horizontalAdvance(full) <= room) return full;
  if (fm.horizontalAdvance(number) <= room) return number;
  return {};
}

QFontMetrics scope_label_metrics(const QFont& base) {
  return QFontMetrics(scope_label_font(base));
}

int scope_at(const TimelineFrame& f, const TimelineLayout& l, const QPoint& pos) {
  if (!l.scopes.contains(pos)) return -1;
  const int depth = (pos.y() - l.scopes.top()) / kScopeBand;
  for (std::size_t i = f.scopes.size(); i-- > 0;) {
    const ScopeInterval& s = f.scopes[i];
    if (static_cast<int>(s.depth) != depth) continue;
    const double x0 = x_of(f, l.plot, s.begin_ns), x1 = x_of(f, l.plot, s.end_ns);
    if (pos.x() >= x0 - 1 && pos.x() <= std::max(x1, x0 + 1) + 1) return static_cast<int>(i);
  }
  return -1;
}

QRect bar_rect(const TimelineFrame& f, const TimelineLayout& l, std::size_t i) {
  const TimelineBar& bar = f.bars.at(i);
  if (bar.lane < 0 || f.lanes == 0) return {};
  const int lane_h = std::min(kMaxLane, l.bars.height() / f.lanes);
  const double ratio = static_cast<double>(bar.block.size) /
                       static_cast<double>(std::max<std::uint64_t>(f.lane_max_size, 1));
  const int h = std::max(2, static_cast<int>(std::lround((lane_h - 2) * ratio)));
  const int x0 = static_cast<int>(std::floor(x_of(f, l.plot, bar.block.alloc_ns)));
  const int x1 = static_cast<int>(std::ceil(x_of(f, l.plot, bar.block.free_ns)));
  const int y = l.bars.top() + bar.lane * lane_h + (lane_h - h) / 2;
  return QRect(x0, y, std::max(1, x1 - x0), h);
}

void paint_timeline(QPainter& p, const TimelineFrame& f, const TimelineLayout& l,
                    const TimelineOverlay& o, const Analysis& whole) {
  p.fillRect(QRect(QPoint(0, 0), QSize(l.plot.right() + kMargin + 1, l.axis.bottom() + 1)),
             Qt::white);
  paint_byte_axis(p, f, l);
  paint_time_axis(p, f, l);
  for (const auto& s : f.series)
    if (s.stacked) paint_area(p, f, l.plot, s);
  p.setRenderHint(QPainter::Antialiasing, true);
  for (const auto& s : f.series)
    if (!s.stacked) paint_line(p, f, l.plot, s);
  p.setRenderHint(QPainter::Antialiasing, false);
  p.setPen(QColor(0xaa, 0xaa, 0xaa));
  p.setBrush(Qt::NoBrush);
  p.drawRect(l.plot.adjusted(0, 0, -1, -1));
  paint_scopes(p, f, l, whole);
  paint_bars(p, f, l, whole);
  paint_marks(p, f, l);
  paint_dim_outside(p, f, l, o);
  paint_overlay(p, f, l, o);
  paint_legend(p, f, l);
}

}  // namespace memtrail::gui
