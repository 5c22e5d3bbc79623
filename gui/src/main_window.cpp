#include "main_window.hpp"

#include <QCoreApplication>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QMenuBar>
#include <QMimeData>
#include <QPaintEvent>
#include <QResizeEvent>
#include <QStatusBar>
#include <QTabWidget>
#include <QTimer>
#include <QToolButton>
#include <QUrl>
#include <algorithm>

#include "background.hpp"
#include "format.hpp"
#include "load_status.hpp"
#include "timing.hpp"

namespace memtrail::gui {

namespace {

// Marks "VIEWID-painted" the first time a ready view (or a widget inside
// it: a paint can stop at a child) paints while visible. The mark is taken
// after the paint: a queued call runs once the backing store is drawn.
class PaintWatch : public QObject {
 public:
  PaintWatch(QString id, SessionView* view) : QObject(view), id_(std::move(id)), view_(view) {
    view->installEventFilter(this);
    connect(view, &SessionView::ready, this, [this] {
      for (QWidget* w : view_->findChildren<QWidget*>()) w->installEventFilter(this);
    });
  }
  bool eventFilter(QObject*, QEvent* event) override {
    if (event->type() == QEvent::Paint && view_->isReady() && view_->isVisible() && !done_) {
      done_ = true;
      QTimer::singleShot(0, this, [id = id_] { timing_mark(id.toStdString() + "-painted"); });
    }
    return false;
  }

 private:
  QString id_;
  SessionView* view_;
  bool done_ = false;
};

}  // namespace

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
  setWindowTitle(tr("memtrail"));
  setAcceptDrops(true);
  // Below this the Fragmentation tab's OOM explainer and segment rows overlap.
  setMinimumSize(kMinimumWidth, kMinimumHeight);
  tabs_ = new QTabWidget(this);
  tabs_->setDocumentMode(true);
  setCentralWidget(tabs_);
  // The window's moment and range, every tab's heading, in the menu bar's
  // corner: in the tab bar's it took ~450 px, and at 1400 px the tabs
  // scrolled and hid the last ones.
  auto* focus = new QWidget(menuBar());
  auto* focus_layout = new QHBoxLayout(focus);
  focus_layout->setContentsMargins(8, 0, 4, 0);
  focus_label_ = new QLabel(focus);
  peak_button_ = new QToolButton(focus);
  peak_button_->setText(tr("Go to peak used"));
  peak_button_->setToolTip(tr("Show every view at the range's peak of used bytes"));
  connect(peak_button_, &QToolButton::clicked, this, &MainWindow::goToPeakUsed);
  focus_layout->addWidget(focus_label_);
  focus_layout->addWidget(peak_button_);
  menuBar()->setCornerWidget(focus, Qt::TopRightCorner);
  status_label_ = new QLabel(this);
  statusBar()->addWidget(status_label_, 1);
  load_status_ = new LoadStatus(this);
  statusBar()->addPermanentWidget(load_status_);
  connect(load_status_, &LoadStatus::cancelClicked, this, &MainWindow::cancelLoad);
  loader_ = new BackgroundTasks(this);
  ranger_ = new BackgroundTasks(this);
  buildMenus();
  updateStatus();
}

MainWindow::~MainWindow() {
  // Cancel and join the workers before the views they report to go away.
  delete loader_;
  delete ranger_;
}

void MainWindow::addView(const QString& id, const QString& title, SessionView* view) {
  views_.push_back({id, title, view});
  tabs_->addTab(view, title);
  if (timing_enabled()) new PaintWatch(id, view);
  const ViewEntry entry = views_.back();
  connect(view, &SessionView::ready, this, [this, entry] { viewReady(entry); });
  connect(view, &SessionView::rangeSelected, this, &MainWindow::applyRange);
  connect(view, &SessionView::momentSelected, this, &MainWindow::applyMoment);
}

SessionView* MainWindow::view(const QString& id) const {
  for (const auto& v : views_)
    if (v.id == id) return v.view;
  // "ID-PART": the tab ID, which shows PART (compare-flame).
  const auto dash = id.indexOf('-');
  SessionView* whole = dash > 0 ? view(id.left(dash)) : nullptr;
  return whole && whole->parts().contains(id.mid(dash + 1)) ? whole : nullptr;
}

QStringList MainWindow::viewIds() const {
  QStringList ids;
  for (const auto& v : views_) {
    ids << v.id;
    for (const QString& part : v.view->parts()) ids << v.id + "-" + part;
  }
  return ids;
}

bool MainWindow::showView(const QString& id) {
  SessionView* v = view(id);
  if (!v) return false;
  tabs_->setCurrentWidget(v);
  const bool part = std::none_of(views_.begin(), views_.end(), [&](auto& e) { return e.id == id; });
  if (part) v->showPart(id.mid(id.indexOf('-') + 1));
  return true;
}

QString MainWindow::currentViewId() const {
  for (const auto& v : views_)
    if (v.view == tabs_->currentWidget()) return v.id;
  return {};
}

bool MainWindow::allViewsReady() const {
  return session_ && !range_pending_ &&
         std::all_of(views_.begin(), views_.end(), [](const auto& v) { return v.view->isReady(); });
}

void MainWindow::viewReady(const ViewEntry& entry) {
  if (!session_ || !entry.view->isReady()) return;
  timing_mark(entry.id.toStdString() + "-ready");
  if (all_ready_sent_ || !allViewsReady()) return;
  all_ready_sent_ = true;
  timing_mark("all-ready");
  emit allReady();
}

void MainWindow::applyRange(std::uint64_t t0, std::uint64_t t1) {
  if (!session_) return;
  const Summary& whole = session_->whole().summary;
  t0 = std::max(t0, whole.first_event_ns);
  t1 = std::min(t1, whole.last_event_ns);
  if (t1 < t0) t1 = t0;
  if (t0 == whole.first_event_ns && t1 == whole.last_event_ns) return resetRange();
  statusBar()->showMessage(tr("analyzing %1 – %2 ...").arg(durationText(t0), durationText(t1)));
  auto session = session_;
  range_pending_ = true;
  // The old numbers stay, greyed, under a "re-analysing" heading, with the
  // progress and Cancel in the status bar until the new range is in.
  auto state = std::make_shared<LoadState>();
  load_status_->follow(state);
  setViewsGreyed(true);
  focus_label_->setText(tr("re-analysing %1 – %2…").arg(durationText(t0), durationText(t1)));
  placeFocusCorner();
  ranger_->run<std::shared_ptr<const Analysis>>(
      [session, t0, t1, state](const BackgroundTasks::Wanted& wanted) {
        return session->analyze_range(
            t0, t1, [&](const LoadProgress& p) { return state->update(p) && wanted(); });
      },
      [this, t0, t1](std::shared_ptr<const Analysis> a) {
        range_pending_ = false;
        endRangeProgress();
        statusBar()->clearMessage();
        if (!a || !a->error.empty()) {
          statusBar()->showMessage(
              tr("range: %1").arg(a ? QString::fromStdString(a->error) : tr("no result")));
          return;
        }
        setViewsRange(t0, t1, std::move(a));
      });
}

void MainWindow::setViewsGreyed(bool greyed) {
  for (const auto& v : views_) v.view->setEnabled(!greyed);
}

bool MainWindow::viewsGreyed() const {
  return std::any_of(views_.begin(), views_.end(),
                     [](const auto& v) { return !v.view->isEnabled(); });
}

void MainWindow::endRangeProgress() {
  if (!loading_) load_status_->stop();
  setViewsGreyed(false);
  updateStatus();
}

void MainWindow::cancelRange() {
  if (!range_pending_) return;
  ranger_->cancel();
  range_pending_ = false;
  statusBar()->showMessage(tr("range analysis cancelled"), 5000);
  endRangeProgress();
}

void MainWindow::resetRange() {
  if (!session_) return;
  if (range_pending_) endRangeProgress();
  ranger_->cancel();
  range_pending_ = false;
  const Summary& s = session_->whole().summary;
  // The whole Analysis lives as long as the session: alias its ownership.
  setViewsRange(s.first_event_ns, s.last_event_ns,
                std::shared_ptr<const Analysis>(session_, &session_->whole()));
}

void MainWindow::setViewsRange(std::uint64_t t0, std::uint64_t t1,
                               std::shared_ptr<const Analysis> a) {
  range_from_ = t0;
  range_to_ = t1;
  range_analysis_ = a;
  all_ready_sent_ = false;
  for (const auto& v : views_) v.view->setRange(t0, t1, a);
  // A moment the new range leaves out goes back to the range's peak.
  if (moment_ < t0 || moment_ > t1) moment_is_peak_ = true;
  if (moment_is_peak_) moment_ = a->summary.peak_time_ns;
  sendMoment();
  updateStatus();
  // The real-window drive (xdotool_drive.sh) waits for a range narrower than the trace.
  if (session_ && (t0 > session_->whole().summary.first_event_ns ||
                   t1 < session_->whole().summary.last_event_ns))
    timing_mark("range-applied");
  emit rangeApplied(t0, t1);
  for (const auto& v : views_) viewReady(v);
}

void MainWindow::applyMoment(std::uint64_t time_ns) {
  if (!session_) return;
  moment_ = std::clamp(time_ns, range_from_, std::max(range_from_, range_to_));
  moment_is_peak_ = false;
  sendMoment();
}

void MainWindow::goToPeakUsed() {
  if (!session_ || !range_analysis_) return;
  moment_ = range_analysis_->summary.peak_time_ns;
  moment_is_peak_ = true;
  sendMoment();
}

void MainWindow::sendMoment() {
  for (const auto& v : views_)
    moment_is_peak_ ? v.view->setPeakMoment(moment_) : v.view->setMoment(moment_);
  updateStatus();
}

// The menu bar sizes its corner widget only when it is resized itself: a
// longer text would stay clipped to the old width, so it is told now (not
// after the next paint: a screenshot taken at once would show the old width).
void MainWindow::placeFocusCorner() {
  QWidget* corner = menuBar()->cornerWidget(Qt::TopRightCorner);
  corner->adjustSize();
  menuBar()->updateGeometry();
  QResizeEvent resized(menuBar()->size(), menuBar()->size());
  QCoreApplication::sendEvent(menuBar(), &resized);
}

QString MainWindow::focusText() const {
  return focus_label_->text();
}

void MainWindow::updateStatus() {
  peak_button_->setEnabled(session_ && !moment_is_peak_);
  if (!session_) {
    focus_label_->clear();
    setWindowTitle(tr("memtrail"));
    status_label_->setText(loading_ ? tr("loading %1").arg(file_)
                                    : tr("no trace: File → Open, or drop a file"));
    return;
  }
  const Summary& s = session_->whole().summary;
  const bool whole = range_from_ == s.first_event_ns && range_to_ == s.last_event_ns;
  setWindowTitle(tr("memtrail — %1").arg(file_));
  focus_label_->setText(
      tr("moment %1 (%2) · range %3")
          .arg(durationText(moment_), moment_is_peak_ ? tr("peak used") : tr("chosen"),
               whole ? tr("whole trace")
                     : tr("%1 – %2").arg(durationText(range_from_), durationText(range_to_))));
  placeFocusCorner();
  status_label_->setText(tr("%1   range %2 – %3%4")
                             .arg(file_, durationText(range_from_), durationText(range_to_),
                                  whole ? tr(" (whole trace)") : QString()));
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
  const auto urls = event->mimeData()->urls();
  if (!urls.isEmpty() && urls.front().isLocalFile()) event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
  const auto urls = event->mimeData()->urls();
  if (urls.isEmpty() || !urls.front().isLocalFile()) return;
  event->acceptProposedAction();
  openPath(urls.front().toLocalFile());
}

}  // namespace memtrail::gui
