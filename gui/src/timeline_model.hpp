// What memtrail-gui's timeline draws for a visible range and a plot width,
// asked of the Session and nothing else: the series' min/max envelopes (one
// bucket per pixel column), the lifetime bars of the largest blocks placed in
// lanes, the marks and the scope entries. Kept apart from the widget so tests
// can read exactly what will be painted.
#pragma once

#include <QColor>
#include <QString>
#include <cstdint>
#include <memory>
#include <vector>

#include "memtrail/session.hpp"

namespace memtrail::gui {

struct TimelineSeries {
  SeriesInfo info;
  QString label;         // legend text
  bool stacked = false;  // leaf pools' used bytes: stacked areas; the rest: lines
  QColor color;          // distinct from every other series' colour
  Envelope envelope;     // Session::series(id, t0, t1, plot width)
  // Stacked areas only: per bucket, the sum of the max of the areas below.
  std::vector<std::uint64_t> base;
  bool hidden = false;  // hidden from its legend entry: not drawn, not scaled for
};

struct TimelineBar {
  BlockLifetime block;
  int lane = -1;  // -1: no room left in the bar area (not drawn)
};

struct TimelineFrame {
  std::uint64_t t0 = 0, t1 = 0;
  int width = 0;  // plot width in pixels = envelope points
  std::vector<TimelineSeries> series;
  // The largest value drawn in [t0, t1] (stacked tops and lines of the
  // shown series, buckets with data only), so the axis refits on zoom.
  std::uint64_t y_max = 0;
  // The byte axis' top: y_max with the charts' headroom, so the series that
  // sets it (often RSS, a line) is drawn inside the plot, not on its frame.
  std::uint64_t y_top = 1;
  // Leaf pools' blocks among Session::largest_blocks(t0, t1, kAskedBars),
  // in its order, at most kMaxBars.
  std::vector<TimelineBar> bars;
  int lanes = 0;                    // lanes in use
  std::uint64_t lane_max_size = 0;  // largest block (bar thickness scale)
  std::vector<Mark> marks;          // whole().marks inside [t0, t1]
  std::vector<ScopeInterval> scopes;
};

class TimelineModel {
 public:
  static constexpr std::size_t kMaxBars = 100;
  static constexpr std::size_t kAskedBars = 2 * kMaxBars;
  static constexpr std::size_t kMaxScopes = 2000;

  void setSession(std::shared_ptr<const Session> session);
  const std::shared_ptr<const Session>& session() const { return session_; }
  // First and last event of the trace (the widest visible range).
  std::uint64_t begin() const { return begin_; }
  std::uint64_t end() const { return end_; }
  // The series drawn, in legend order (no envelopes).
  const std::vector<TimelineSeries>& layers() const { return layers_; }
  // Hides or shows layer i (a click on its legend entry).
  void setHidden(std::size_t i, bool hidden);

  // Everything to draw for [t0, t1] at `width` pixels; bars are placed in at
  // most `max_lanes` lanes.
  TimelineFrame compute(std::uint64_t t0, std::uint64_t t1, int width, int max_lanes) const;

 private:
  void placeBars(TimelineFrame& frame, int max_lanes) const;
  void makeColorsDistinct();

  std::shared_ptr<const Session> session_;
  std::vector<TimelineSeries> layers_;
  std::uint64_t begin_ = 0, end_ = 0;
};

// A pool's name for legends and lists, "name #id" when another pool of the
// trace has the same name (each run of samples/fragmentation makes its own
// "caching pool").
QString pool_label(const Analysis& a, PoolId pool);

// Colour of the i-th pool (a qualitative palette readable on white).
QColor pool_color(std::size_t i);

}  // namespace memtrail::gui
