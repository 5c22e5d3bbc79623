#include "summary_view.hpp"

#include <QGridLayout>
#include <QLabel>
#include <QScrollArea>
#include <QVBoxLayout>
#include <map>
#include <tuple>

#include "breakdown_pie.hpp"
#include "format.hpp"

namespace memtrail::gui {

SummaryView::SummaryView(QWidget* parent) : SessionView(parent) {
  auto* outer = new QHBoxLayout(this);
  auto* left = new QVBoxLayout;
  heading_ = new QLabel(tr("No trace loaded"), this);
  QFont big = heading_->font();
  big.setPointSizeF(big.pointSizeF() * 1.3);
  big.setBold(true);
  heading_->setFont(big);
  left->addWidget(heading_);
  numbers_ = new QGridLayout;
  numbers_->setHorizontalSpacing(16);
  left->addLayout(numbers_);
  left->addStretch(1);
  outer->addLayout(left, 0);

  auto* right = new QVBoxLayout;
  moment_label_ = new QLabel(this);
  moment_label_->setFont(big);
  right->addWidget(moment_label_);
  auto* scroll = new QScrollArea(this);
  scroll->setWidgetResizable(true);
  scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  scroll->setFrameShape(QFrame::NoFrame);
  pie_area_ = new QWidget(scroll);
  pies_ = new QGridLayout(pie_area_);
  scroll->setWidget(pie_area_);
  right->addWidget(scroll, 1);
  idle_label_ = new QLabel(this);
  idle_label_->setWordWrap(true);
  idle_label_->setVisible(false);
  right->addWidget(idle_label_);
  outer->addLayout(right, 1);
}

void SummaryView::setSession(std::shared_ptr<const Session> session) {
  tasks_.cancel();
  session_ = std::move(session);
  range_.reset();
  moment_chosen_ = false;
  ready_ = false;
  showNumbers();
  showPies({});
}

void SummaryView::setRun(const std::optional<RunIndex>& run) {
  run_ = run;
  if (range_) showNumbers();
}

void SummaryView::setRange(std::uint64_t, std::uint64_t, std::shared_ptr<const Analysis> range) {
  range_ = std::move(range);
  showNumbers();
  // The pies show the range's peak unless the user chose a moment inside it.
  if (!moment_chosen_ || !range_ || moment_ < range_->range_from_ns ||
      moment_ > range_->range_to_ns) {
    moment_chosen_ = false;
    moment_ = range_ ? range_->summary.peak_time_ns : 0;
  }
  requestBreakdown();
}

void SummaryView::setMoment(std::uint64_t time_ns) {
  if (!session_ || (moment_chosen_ && moment_ == time_ns)) return;
  moment_ = time_ns;
  moment_chosen_ = true;
  requestBreakdown();
}

void SummaryView::setPeakMoment(std::uint64_t time_ns) {
  // setRange already asked for the range's peak: nothing new.
  if (!session_ || (!moment_chosen_ && moment_ == time_ns)) return;
  moment_ = time_ns;
  moment_chosen_ = false;
  requestBreakdown();
}

QString SummaryView::momentText() const {
  return moment_chosen_ ? tr("Pools at %1 (chosen moment)").arg(durationText(moment_))
                        : tr("Pools at %1 (peak used)").arg(durationText(moment_));
}

void SummaryView::requestBreakdown() {
  if (!session_ || !range_) return;
  ready_ = false;
  moment_label_->setText(momentText() + tr(" ..."));
  auto session = session_;
  const std::uint64_t t = moment_;
  // The peak by its event position: events later at the same nanosecond
  // would otherwise show less than the peak used figure.
  const bool at_peak = !moment_chosen_;
  const std::uint64_t position = range_->summary.peak_position;
  tasks_.run<std::vector<PoolBreakdown>>(
      [session, t, at_peak, position](const BackgroundTasks::Wanted&) {
        return at_peak ? session->breakdown_at_position(position) : session->breakdown(t);
      },
      [this](std::vector<PoolBreakdown> pools) {
        moment_label_->setText(momentText());
        showPies(pools);
        ready_ = true;
        emit ready();
      });
}

void SummaryView::setValue(const QString& key, const QString& label, const QString& value) {
  QLabel* v = values_.value(key);
  if (!v) {
    const int row = numbers_->rowCount();
    numbers_->addWidget(new QLabel(label, this), row, 0);
    v = new QLabel(this);
    v->setTextInteractionFlags(Qt::TextSelectableByMouse);
    numbers_->addWidget(v, row, 1);
    values_.insert(key, v);
    keys_ << key;
  }
  v->setText(value);
}

QString SummaryView::value(const QString& key) const {
  QLabel* v = values_.value(key);
  return v ? v->text() : QString();
}

QStringList SummaryView::keys() const {
  return keys_;
}

QStringList SummaryView::pieTitles() const {
  return pie_titles_;
}

}  // namespace memtrail::gui
