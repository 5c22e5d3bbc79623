// The segments of one pool at a moment, one row each (memory_viz's
// allocator state history): each row is cut into the spans Session's
// segment_spans() gives, coloured by state, widths proportional to bytes
// within the row. Click a span: spanClicked.
#pragma once

#include <QWidget>
#include <vector>

#include "memtrail/session.hpp"

namespace memtrail::gui {

struct SegmentRow {
  std::uint64_t address = 0, size = 0;  // size = the bytes the row spans
  // false: not a segment but live blocks packed side by side (a pool with no
  // segment information, or blocks outside every segment).
  bool segment = true;
  std::vector<SegmentSpan> spans;
};

QColor span_color(SpanState state);
const char* span_state_name(SpanState state);  // "allocated", ...

class SegmentRows : public QWidget {
  Q_OBJECT

 public:
  explicit SegmentRows(QWidget* parent = nullptr);

  void setRows(std::vector<SegmentRow> rows);
  const std::vector<SegmentRow>& rows() const { return rows_; }
  // The selected span (drawn outlined); -1, -1 for none.
  void select(int row, int span);
  std::pair<int, int> selected() const { return selected_; }

  QRect spanRect(std::size_t row, std::size_t span) const;
  std::pair<int, int> spanAt(const QPoint& pos) const;  // -1, -1: none
  QSize sizeHint() const override;

  static constexpr int kRowHeight = 20;
  static constexpr int kRowGap = 4;

 signals:
  void spanClicked(int row, int span);

 protected:
  void paintEvent(QPaintEvent*) override;
  void mousePressEvent(QMouseEvent*) override;

 private:
  int labelWidth() const;
  QRect barArea(std::size_t row) const;

  std::vector<SegmentRow> rows_;
  // Per row: bytes before each span (spans are contiguous), and the total.
  std::vector<std::vector<std::uint64_t>> offsets_;
  std::pair<int, int> selected_{-1, -1};
};

}  // namespace memtrail::gui
