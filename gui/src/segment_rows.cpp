#include "segment_rows.hpp"

#include <QMouseEvent>
#include <QPaintEvent>
#include <QPainter>
#include <algorithm>
#include <cmath>

#include "timeline_axis.hpp"

namespace memtrail::gui {
namespace {
constexpr int kMargin = 6;
}

QColor span_color(SpanState state) {
  switch (state) {
    case SpanState::allocated:
      return QColor(0x4e, 0x79, 0xa7);
    case SpanState::inactive_split:
      return QColor(0xe1, 0x57, 0x59);
    case SpanState::cached_free:
      return QColor(0xc8, 0xc8, 0xc8);
  }
  return Qt::black;
}

const char* span_state_name(SpanState state) {
  switch (state) {
    case SpanState::allocated:
      return "allocated";
    case SpanState::inactive_split:
      return "inactive split (free, pinned by live blocks)";
    case SpanState::cached_free:
      return "cached free (releasable)";
  }
  return "?";
}

SegmentRows::SegmentRows(QWidget* parent) : QWidget(parent) {
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
}

void SegmentRows::setRows(std::vector<SegmentRow> rows) {
  rows_ = std::move(rows);
  offsets_.clear();
  for (const auto& r : rows_) {
    std::vector<std::uint64_t> off;
    off.reserve(r.spans.size() + 1);
    std::uint64_t at = 0;
    for (const auto& s : r.spans) {
      off.push_back(at);
      at += s.size;
    }
    off.push_back(at);
    offsets_.push_back(std::move(off));
  }
  selected_ = {-1, -1};
  setFixedHeight(sizeHint().height());
  update();
}

void SegmentRows::select(int row, int span) {
  selected_ = {row, span};
  update();
}

QSize SegmentRows::sizeHint() const {
  const int n = static_cast<int>(rows_.size());
  return QSize(600, 2 * kMargin + std::max(1, n) * (kRowHeight + kRowGap));
}

int SegmentRows::labelWidth() const {
  // Wide digits: 'f' is narrow in proportional fonts and under-measured.
  return fontMetrics().horizontalAdvance(QStringLiteral("0x888888888888  1023.5 MiB")) + 24;
}

QRect SegmentRows::barArea(std::size_t row) const {
  const int y = kMargin + static_cast<int>(row) * (kRowHeight + kRowGap);
  const int left = labelWidth();
  return QRect(left, y, std::max(1, width() - left - kMargin), kRowHeight);
}

QRect SegmentRows::spanRect(std::size_t row, std::size_t span) const {
  const QRect area = barArea(row);
  const auto& off = offsets_.at(row);
  const double total = static_cast<double>(std::max<std::uint64_t>(rows_[row].size, off.back()));
  if (total <= 0) return {};
  const double x0 = area.left() + static_cast<double>(off.at(span)) / total * area.width();
  const double x1 = area.left() + static_cast<double>(off.at(span + 1)) / total * area.width();
  const int l = static_cast<int>(std::floor(x0));
  return QRect(l, area.top(), std::max(1, static_cast<int>(std::ceil(x1)) - l), area.height());
}

std::pair<int, int> SegmentRows::spanAt(const QPoint& pos) const {
  for (std::size_t row = 0; row < rows_.size(); ++row) {
    const QRect area = barArea(row);
    if (pos.y() < area.top() || pos.y() > area.bottom()) continue;
    if (pos.x() < area.left() || pos.x() > area.right() || rows_[row].spans.empty()) break;
    const auto& off = offsets_[row];
    const double total = static_cast<double>(std::max<std::uint64_t>(rows_[row].size, off.back()));
    const double bytes = (pos.x() - area.left() + 0.5) / area.width() * total;
    auto it = std::upper_bound(off.begin(), off.end() - 1, static_cast<std::uint64_t>(bytes));
    const auto span = std::max<std::ptrdiff_t>(0, it - off.begin() - 1);
    return {static_cast<int>(row), static_cast<int>(span)};
  }
  return {-1, -1};
}

void SegmentRows::paintEvent(QPaintEvent* e) {
  QPainter p(this);
  p.fillRect(e->rect(), Qt::white);
  if (rows_.empty()) {
    p.setPen(QColor(0x66, 0x66, 0x66));
    p.drawText(rect(), Qt::AlignCenter, tr("No segment and no live block at this moment."));
    return;
  }
  const int first = std::max(0, (e->rect().top() - kMargin) / (kRowHeight + kRowGap));
  const int last = std::min(static_cast<int>(rows_.size()) - 1,
                            (e->rect().bottom() - kMargin) / (kRowHeight + kRowGap));
  for (int row = first; row <= last; ++row) {
    const SegmentRow& r = rows_[static_cast<std::size_t>(row)];
    const QRect area = barArea(static_cast<std::size_t>(row));
    p.setPen(Qt::black);
    const QString label =
        r.segment
            ? QStringLiteral("0x%1  %2").arg(r.address, 0, 16).arg(format_bytes(r.size))
            : QStringLiteral("%1 live blocks  %2").arg(r.spans.size()).arg(format_bytes(r.size));
    p.drawText(QRect(2, area.top(), labelWidth() - 8, area.height()),
               Qt::AlignRight | Qt::AlignVCenter, label);
    p.fillRect(area, QColor(0xf4, 0xf4, 0xf4));
    for (std::size_t s = 0; s < r.spans.size(); ++s) {
      const QRect rect = spanRect(static_cast<std::size_t>(row), s);
      p.fillRect(rect, span_color(r.spans[s].state));
      // Neighbouring live blocks stay two blocks: a light seam between them.
      if (s > 0 && rect.width() >= 3 && r.spans[s].state == SpanState::allocated &&
          r.spans[s - 1].state == SpanState::allocated) {
        p.setPen(QColor(255, 255, 255, 170));
        p.drawLine(rect.left(), rect.top(), rect.left(), rect.bottom());
      }
    }
    p.setPen(QColor(0x99, 0x99, 0x99));
    p.setBrush(Qt::NoBrush);
    p.drawRect(area.adjusted(0, 0, -1, -1));
  }
  if (selected_.first >= 0 && selected_.first < static_cast<int>(rows_.size())) {
    p.setPen(QPen(Qt::black, 2));
    p.setBrush(Qt::NoBrush);
    p.drawRect(spanRect(static_cast<std::size_t>(selected_.first),
                        static_cast<std::size_t>(selected_.second))
                   .adjusted(0, -1, 0, 1));
  }
}

void SegmentRows::mousePressEvent(QMouseEvent* e) {
  const auto [row, span] = spanAt(e->pos());
  if (row < 0) return;
  select(row, span);
  emit spanClicked(row, span);
}

}  // namespace memtrail::gui
