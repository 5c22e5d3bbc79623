// Painting of memtrail-gui's timeline: turns a TimelineFrame (what the
// Session answered) into pixels inside the rectangles of a TimelineLayout.
// No Session calls here: painting stays cheap however large the trace.
#pragma once

#include <QFontMetrics>
#include <QPainter>
#include <QRect>
#include <optional>
#include <utility>

#include "timeline_model.hpp"

namespace memtrail::gui {

struct TimelineLayout {
  QRect legend, plot, scopes, bars, axis;
  int label_width = 0;  // left margin for the byte axis labels
};

// Lays the timeline out in `size`, the legend flowing over as many rows as
// its entries need.
TimelineLayout layout_timeline(const QSize& size, const QFontMetrics& fm,
                               const std::vector<TimelineSeries>& layers);

struct TimelineOverlay {
  std::optional<std::uint64_t> moment;
  std::optional<std::pair<std::uint64_t, std::uint64_t>> highlight;  // the selected range
  std::optional<std::pair<int, int>> rubber_band;                    // x pixels, while dragging
};

// The rectangle of bar i of `frame` in `layout` (empty when not placed).
QRect bar_rect(const TimelineFrame& frame, const TimelineLayout& layout, std::size_t i);

// The legend entry of each series (a click there hides or shows it).
std::vector<QRect> legend_rects(const QFontMetrics& fm, const TimelineLayout& layout,
                                const std::vector<TimelineSeries>& series);
// The band of scope entry i (frame.scopes index); empty past the drawn depths.
QRect scope_band_rect(const TimelineFrame& frame, const TimelineLayout& layout, std::size_t i);
// The scope's name in `whole` ("scope N" when it has none).
QString scope_name(const Analysis& whole, std::uint32_t scope);
// The text drawn in band i: "name #entry" when it fits, "#entry" when only
// that fits, empty when the band is too narrow for either. `fm` measures the
// labels' font (scope_label_metrics).
QString scope_band_label(const TimelineFrame& frame, const TimelineLayout& layout,
                         const QFontMetrics& fm, std::size_t i, const Analysis& whole);
QFontMetrics scope_label_metrics(const QFont& base);
// The scope band under `pos` (frame.scopes index), -1 for none.
int scope_at(const TimelineFrame& frame, const TimelineLayout& layout, const QPoint& pos);

void paint_timeline(QPainter& p, const TimelineFrame& frame, const TimelineLayout& layout,
                    const TimelineOverlay& overlay, const Analysis& whole);

}  // namespace memtrail::gui
