#include "timeline_view.hpp"

#include <QApplication>
#include <QHelpEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QTimer>
#include <QToolTip>
#include <QWheelEvent>
#include <algorithm>
#include <cmath>

#include "timeline_axis.hpp"
#include "timing.hpp"

namespace memtrail::gui {
namespace {

constexpr int kClickSlop = 3;      // pixels a press may move and still be a click
constexpr int kTooltipFrames = 6;  // frames of a block's stack in its tooltip

}  // namespace

TimelineView::TimelineView(QWidget* parent) : SessionView(parent) {
  setMouseTracking(true);
  setMinimumSize(400, 260);
  setFocusPolicy(Qt::StrongFocus);
  click_timer_ = new QTimer(this);
  click_timer_->setSingleShot(true);
  connect(click_timer_, &QTimer::timeout, this, [this] {
    setMoment(click_time_);
    emit momentSelected(click_time_);
  });
}

void TimelineView::setSession(std::shared_ptr<const Session> session) {
  model_.setSession(std::move(session));
  overlay_ = {};
  v0_ = model_.begin();
  v1_ = model_.end();
  recompute();
  if (isReady()) emit ready();
}

void TimelineView::setRange(std::uint64_t t0, std::uint64_t t1, std::shared_ptr<const Analysis>) {
  if (!isReady()) return;
  if (t1 < t0) std::swap(t0, t1);
  const bool whole = t0 <= model_.begin() && t1 >= model_.end();
  if (whole) {
    overlay_.highlight.reset();
    setVisibleRange(model_.begin(), model_.end());
  } else {
    overlay_.highlight = std::make_pair(t0, t1);
    const std::uint64_t margin = (t1 - t0) / 20;
    setVisibleRange(t0 > margin ? t0 - margin : 0, t1 + margin);
  }
  emit ready();
}

void TimelineView::setMoment(std::uint64_t time_ns) {
  overlay_.moment = time_ns;
  update();
}

void TimelineView::setVisibleRange(std::uint64_t t0, std::uint64_t t1) {
  if (t1 < t0) std::swap(t0, t1);
  const std::uint64_t begin = model_.begin(), end = model_.end();
  const std::uint64_t whole = end - begin;
  const std::uint64_t span = std::min(std::max(t1 - t0, kMinSpanNs), std::max(whole, kMinSpanNs));
  t0 = std::clamp(t0, begin, end > begin + span ? end - span : begin);
  v0_ = t0;
  v1_ = t0 + span;
  recompute();
}

void TimelineView::zoomAt(double factor, std::uint64_t time) {
  if (!isReady() || !(factor > 0)) return;
  const double span = static_cast<double>(v1_ - v0_);
  time = std::clamp(time, v0_, v1_);
  const double fraction = (static_cast<double>(time - v0_)) / span;
  const double new_span = std::max(span / factor, static_cast<double>(kMinSpanNs));
  const double new_v0 = std::max(0.0, static_cast<double>(time) - fraction * new_span);
  const auto t0 = static_cast<std::uint64_t>(std::llround(new_v0));
  setVisibleRange(t0, t0 + static_cast<std::uint64_t>(std::llround(new_span)));
  // The real-window drive (xdotool_drive.sh) waits for a zoom in.
  if (factor > 1) timing_mark("timeline-zoomed-in");
}

void TimelineView::panBy(std::int64_t ns) {
  if (!isReady()) return;
  const std::uint64_t span = v1_ - v0_;
  std::uint64_t t0 = v0_;
  if (ns < 0)
    t0 = static_cast<std::uint64_t>(-ns) > t0 ? 0 : t0 - static_cast<std::uint64_t>(-ns);
  else
    t0 += static_cast<std::uint64_t>(ns);
  setVisibleRange(t0, t0 + span);
}

std::uint64_t TimelineView::timeAtX(double x) const {
  const double w = std::max(1, layout_.plot.width());
  const double fraction = std::clamp((x - layout_.plot.left()) / w, 0.0, 1.0);
  return v0_ + static_cast<std::uint64_t>(std::llround(fraction * static_cast<double>(v1_ - v0_)));
}

double TimelineView::xAtTime(std::uint64_t t) const {
  const double span = static_cast<double>(std::max<std::uint64_t>(v1_ - v0_, 1));
  return layout_.plot.left() +
         static_cast<double>(std::clamp(t, v0_, v1_) - v0_) / span * layout_.plot.width();
}

void TimelineView::recompute() {
  layout_ = layout_timeline(size(), fontMetrics(), model_.layers());
  frame_ = model_.compute(v0_, v1_, layout_.plot.width(), std::max(1, layout_.bars.height() / 4));
  update();
}

int TimelineView::barAt(const QPoint& pos) const {
  // Later bars are painted over earlier ones: the topmost wins.
  for (std::size_t i = frame_.bars.size(); i-- > 0;)
    if (barRect(i).adjusted(0, -1, 0, 1).contains(pos)) return static_cast<int>(i);
  return -1;
}

QString TimelineView::barToolTip(std::size_t i) const {
  const BlockLifetime& b = frame_.bars.at(i).block;
  const Analysis& a = model_.session()->whole();
  QString text = QStringLiteral("<b>%1</b> in %2<br>allocated at %3")
                     .arg(format_bytes(b.size), pool_label(a, b.pool).toHtmlEscaped(),
                          format_moment(b.alloc_ns));
  if (b.free_ns == kTimeMax)
    text += QStringLiteral(", never freed");
  else
    text += QStringLiteral(", freed at %1 (lived %2)")
                .arg(format_moment(b.free_ns), format_time(b.free_ns - b.alloc_ns));
  FrameList frames;
  if (b.site.value < a.sites.size()) {
    frames = at(a.sites, b.site).frames;
    if (frames.empty() && has_stack(at(a.sites, b.site).stack))
      frames = model_.session()->frames(at(a.sites, b.site).stack);
  }
  if (frames.empty()) text += QStringLiteral("<br><i>no stack recorded</i>");
  for (std::size_t k = 0; k < frames.size() && k < kTooltipFrames; ++k)
    text += QStringLiteral("<br>&nbsp;&nbsp;") +
            QString::fromStdString(frames[k].describe()).toHtmlEscaped();
  if (frames.size() > kTooltipFrames)
    text += QStringLiteral("<br>&nbsp;&nbsp;… %1 more").arg(frames.size() - kTooltipFrames);
  return text;
}

int TimelineView::legendAt(const QPoint& pos) const {
  const std::vector<QRect> rects = legend_rects(fontMetrics(), layout_, model_.layers());
  for (std::size_t i = 0; i < rects.size(); ++i)
    if (rects[i].contains(pos)) return static_cast<int>(i);
  return -1;
}

QRect TimelineView::legendRect(std::size_t i) const {
  const std::vector<QRect> rects = legend_rects(fontMetrics(), layout_, model_.layers());
  return i < rects.size() ? rects[i] : QRect();
}

void TimelineView::setSeriesHidden(std::size_t i, bool hidden) {
  model_.setHidden(i, hidden);
  recompute();
}

bool TimelineView::seriesHidden(std::size_t i) const {
  return i < model_.layers().size() && model_.layers()[i].hidden;
}

QString TimelineView::scopeToolTip(std::size_t i) const {
  const ScopeInterval& s = frame_.scopes.at(i);
  const QString name = scope_name(model_.session()->whole(), s.scope);
  const QString end =
      s.end_ns == kTimeMax ? tr("still open at the end") : tr("to %1").arg(format_moment(s.end_ns));
  return tr("<b>%1 #%2</b> (thread %3, depth %4)<br>from %5 %6")
      .arg(name.toHtmlEscaped())
      .arg(s.entry)
      .arg(s.thread)
      .arg(s.depth)
      .arg(format_moment(s.begin_ns), end);
}

QString TimelineView::scopeLabel(std::size_t i) const {
  return scope_band_label(frame_, layout_, scope_label_metrics(font()), i,
                          model_.session()->whole());
}

QString TimelineView::plotToolTip(const QPoint& pos) const {
  const int i = pos.x() - layout_.plot.left();
  QString text = QStringLiteral("<b>%1</b>").arg(format_moment(timeAtX(pos.x())));
  for (const auto& s : frame_.series) {
    const Envelope& e = s.envelope;
    if (i < 0 || static_cast<std::size_t>(i) >= e.max.size() || !e.has_data[i]) continue;
    text += QStringLiteral("<br>%1: %2").arg(s.label.toHtmlEscaped(), format_bytes(e.max[i]));
    if (e.min[i] != e.max[i]) text += QStringLiteral(" (min %1)").arg(format_bytes(e.min[i]));
  }
  return text;
}

bool TimelineView::event(QEvent* e) {
  if (e->type() == QEvent::ToolTip && isReady()) {
    auto* help = static_cast<QHelpEvent*>(e);
    const int bar = barAt(help->pos());
    const int scope = scopeAt(help->pos());
    if (scope >= 0)
      QToolTip::showText(help->globalPos(), scopeToolTip(static_cast<std::size_t>(scope)), this);
    else if (bar >= 0)
      QToolTip::showText(help->globalPos(), barToolTip(static_cast<std::size_t>(bar)), this);
    else if (layout_.plot.contains(help->pos()))
      QToolTip::showText(help->globalPos(), plotToolTip(help->pos()), this);
    else
      QToolTip::hideText();
    return true;
  }
  return SessionView::event(e);
}

void TimelineView::paintEvent(QPaintEvent*) {
  QPainter p(this);
  if (!isReady()) {
    p.fillRect(rect(), palette().window());
    p.drawText(rect(), Qt::AlignCenter, tr("No trace loaded"));
    return;
  }
  paint_timeline(p, frame_, layout_, overlay_, model_.session()->whole());
}

void TimelineView::resizeEvent(QResizeEvent*) {
  recompute();
}

void TimelineView::wheelEvent(QWheelEvent* e) {
  if (!isReady()) return;
  const double notches = e->angleDelta().y() / 120.0;
  if (notches == 0) return;
  zoomAt(std::pow(kWheelFactor, notches), timeAtX(e->position().x()));
  e->accept();
}

void TimelineView::mousePressEvent(QMouseEvent* e) {
  if (!isReady()) return;
  press_pos_ = e->pos();
  press_v0_ = v0_;
  moved_ = false;
  const bool band = e->button() == Qt::RightButton ||
                    (e->button() == Qt::LeftButton && (e->modifiers() & Qt::ShiftModifier));
  drag_ = band ? Drag::band : e->button() == Qt::LeftButton ? Drag::pan : Drag::none;
}

void TimelineView::mouseMoveEvent(QMouseEvent* e) {
  if (drag_ == Drag::none) return;
  const int dx = e->pos().x() - press_pos_.x();
  moved_ = moved_ || std::abs(dx) >= kClickSlop;
  if (drag_ == Drag::band) {
    const int lo = layout_.plot.left(), hi = layout_.plot.right() + 1;
    overlay_.rubber_band =
        std::make_pair(std::clamp(press_pos_.x(), lo, hi), std::clamp(e->pos().x(), lo, hi));
    update();
  } else if (moved_) {
    const double ns_per_px =
        static_cast<double>(v1_ - v0_) / static_cast<double>(std::max(1, layout_.plot.width()));
    const double t0 = static_cast<double>(press_v0_) - dx * ns_per_px;
    const auto start = static_cast<std::uint64_t>(std::llround(std::max(0.0, t0)));
    setVisibleRange(start, start + (v1_ - v0_));
  }
}

void TimelineView::mouseReleaseEvent(QMouseEvent* e) {
  const Drag drag = std::exchange(drag_, Drag::none);
  overlay_.rubber_band.reset();
  moved_ = moved_ || std::abs(e->pos().x() - press_pos_.x()) >= kClickSlop;
  const int entry = drag == Drag::pan && !moved_ ? legendAt(e->pos()) : -1;
  if (entry >= 0) {  // a legend entry: hide or show its series, no moment
    setSeriesHidden(static_cast<std::size_t>(entry),
                    !seriesHidden(static_cast<std::size_t>(entry)));
  } else if (drag == Drag::band && moved_) {
    const int x0 = std::min(press_pos_.x(), e->pos().x());
    const int x1 = std::max(press_pos_.x(), e->pos().x());
    const std::uint64_t t0 = timeAtX(x0), t1 = timeAtX(x1);
    overlay_.highlight = std::make_pair(t0, t1);
    update();
    emit rangeSelected(t0, t1);
  } else if (drag == Drag::pan && !moved_ && e->pos().x() >= layout_.plot.left() &&
             e->pos().x() <= layout_.plot.right()) {
    // The first click of a double click must not move the moment.
    click_time_ = timeAtX(e->pos().x());
    click_timer_->start(QApplication::doubleClickInterval());
  }
  update();
}

void TimelineView::mouseDoubleClickEvent(QMouseEvent* e) {
  click_timer_->stop();
  if (!isReady()) return;
  if (const int entry = legendAt(e->pos()); entry >= 0) {  // two quick toggles
    const auto i = static_cast<std::size_t>(entry);
    setSeriesHidden(i, !seriesHidden(i));
    drag_ = Drag::none;
    return;
  }
  drag_ = Drag::none;  // the release that follows is no click
  overlay_.highlight.reset();
  setVisibleRange(model_.begin(), model_.end());
  emit rangeSelected(model_.begin(), model_.end());
}

}  // namespace memtrail::gui
