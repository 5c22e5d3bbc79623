#include "compare_view.hpp"

#include "call_tree_cache.hpp"

#include <QAction>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QPushButton>
#include <QSplitter>
#include <QTabWidget>
#include <QTreeView>
#include <QVBoxLayout>

#include "call_tree_cache.hpp"
#include "compare_model.hpp"
#include "compare_timeline.hpp"
#include "diff_flame.hpp"
#include "format.hpp"
#include "main_window.hpp"
#include "memtrail/run_index.hpp"
#include "trace_file_dialog.hpp"

namespace memtrail::gui {

namespace {

constexpr std::size_t kTimelinePoints = 800;

QTreeView* newTable(QWidget* parent, QAbstractItemModel* model) {
  auto* view = new QTreeView(parent);
  view->setRootIsDecorated(false);
  view->setUniformRowHeights(true);
  view->setAlternatingRowColors(true);
  view->setModel(model);
  return view;
}

// A run directory compares by its first readable process, as File → Open
// shows it; "" with *error set when there is none.
std::string traceOf(const std::string& path, std::string* error) {
  if (!is_run_directory(path)) return path;
  auto run = read_run(path, error);
  if (!run) return {};
  for (const RunProcess& p : run->processes)
    if (p.header_error.empty()) return p.file;
  *error = path + ": no readable trace in the run";
  return {};
}

struct Loaded {
  std::shared_ptr<const Session> session;
  QString error;
};

// What the comparing thread answers: the diff and B's top-down call tree
// (for the differential flame graph); both null when B's range failed.
struct Compared {
  std::shared_ptr<const DiffResult> diff;
  std::shared_ptr<const CallTree> tree_b;
};

}  // namespace

CompareView::CompareView(CallTreeCache* trees, QWidget* parent)
    : SessionView(parent), trees_(trees ? trees : new CallTreeCache(this)) {
  auto* layout = new QVBoxLayout(this);
  heading_ = new QLabel(this);
  heading_->setWordWrap(true);
  heading_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  layout->addWidget(heading_);

  auto* controls = new QHBoxLayout;
  auto* open = new QPushButton(tr("Compare with…"), this);
  open->setToolTip(tr("Choose trace B, compared against the open trace A"));
  controls->addWidget(open);
  filter_ = new QLineEdit(this);
  filter_->setPlaceholderText(tr("Filter sites by function, file, module or pool"));
  filter_->setClearButtonEnabled(true);
  controls->addWidget(filter_, 1);
  layout->addLayout(controls);

  auto* split = new QSplitter(Qt::Vertical, this);
  tabs_ = new QTabWidget(split);
  sites_model_ = new CompareSitesModel(this);
  sites_view_ = newTable(tabs_, sites_model_);
  sites_view_->header()->setSortIndicator(CompareSitesModel::impact, Qt::DescendingOrder);
  sites_view_->setSortingEnabled(true);
  sites_view_->header()->setStretchLastSection(false);
  sites_view_->header()->setSectionResizeMode(CompareSitesModel::site, QHeaderView::Stretch);
  tabs_->addTab(sites_view_, tr("Sites (B − A)"));
  flame_ = new DiffFlameView(tabs_);
  tabs_->addTab(flame_, tr("Differential flame graph"));

  auto* bottom = new QSplitter(Qt::Horizontal, split);
  pools_model_ = new ComparePoolsModel(this);
  pools_view_ = newTable(bottom, pools_model_);
  timeline_ = new CompareTimeline(bottom);
  bottom->addWidget(pools_view_);
  bottom->addWidget(timeline_);
  bottom->setStretchFactor(1, 1);  // the chart takes what the pools table leaves
  split->addWidget(tabs_);
  split->addWidget(bottom);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 2);
  layout->addWidget(split, 1);

  connect(filter_, &QLineEdit::textChanged, this, &CompareView::setFilter);
  connect(open, &QPushButton::clicked, this, &CompareView::chooseCompare);
  showEmpty(tr("No trace loaded"));
}

void CompareView::chooseCompare() {
  auto* dialog = new TraceFileDialog(this);
  dialog->setWindowTitle(tr("Compare with trace B"));
  dialog->setAttribute(Qt::WA_DeleteOnClose);
  connect(dialog, &QDialog::accepted, this, [this, dialog] {
    if (!dialog->chosenPath().isEmpty()) openCompare(dialog->chosenPath());
  });
  dialog->open();
}

void CompareView::setSession(std::shared_ptr<const Session> session) {
  differ_.cancel();
  session_ = std::move(session);
  range_.reset();
  ready_ = false;
  showEmpty(session_ ? tr("Loading...") : tr("No trace loaded"));
}

void CompareView::setRange(std::uint64_t t0, std::uint64_t t1,
                           std::shared_ptr<const Analysis> range) {
  range_ = std::move(range);
  t0_ = t0;
  t1_ = t1;
  recompute();
}

bool CompareView::wholeRange() const {
  if (!session_) return true;
  const Summary& s = session_->whole().summary;
  return t0_ <= s.first_event_ns && t1_ >= s.last_event_ns;
}

void CompareView::openCompare(const QString& path) {
  loader_.cancel();
  differ_.cancel();
  compare_path_ = path;
  compare_error_.clear();
  b_session_.reset();
  b_loading_ = !path.isEmpty();
  if (!b_loading_) return recompute();
  ready_ = false;
  showEmpty(tr("Loading trace B: %1 ...").arg(path));
  loader_.run<Loaded>(
      [path = path.toStdString()](const BackgroundTasks::Wanted& wanted) {
        Loaded out;
        std::string error;
        const std::string file = traceOf(path, &error);
        if (file.empty()) return Loaded{nullptr, QString::fromStdString(error)};
        OpenResult r =
            Session::open(file, SessionOptions{}, [&](const LoadProgress&) { return wanted(); });
        out.session = std::move(r.session);
        if (!out.session)
          out.error = QString::fromStdString(r.message.empty() ? error_name(r.error) : r.message);
        return out;
      },
      [this](Loaded loaded) {
        b_loading_ = false;
        b_session_ = std::move(loaded.session);
        compare_error_ = loaded.error;
        emit compareOpened(compare_path_);
        recompute();
      });
}

// The diff of A's range against B's, off the GUI thread.
void CompareView::recompute() {
  differ_.cancel();
  ready_ = false;
  tree_a_.reset();
  tree_b_.reset();
  pending_diff_.reset();
  if (!range_) return;  // A is not in place yet; setRange follows
  if (compare_path_.isEmpty())
    return showEmpty(tr("Trace A: %1. No trace B to compare with: File → Compare with… "
                        "(or memtrail-gui A.mtr --compare B.mtr) shows what changed from A to "
                        "B per site and per pool, as memtrail diff does.")
                         .arg(QString::fromStdString(session_->path())));
  if (b_loading_) return showEmpty(tr("Loading trace B: %1 ...").arg(compare_path_));
  if (!b_session_) return showEmpty(tr("Cannot load trace B: %1").arg(compare_error_));
  heading_->setText(tr("Comparing ..."));
  auto a = range_;
  auto b = b_session_;
  const bool whole = wholeRange();
  const std::uint64_t t0 = t0_, t1 = t1_;
  differ_.run<Compared>(
      [a, b, whole, t0, t1](const BackgroundTasks::Wanted& wanted) {
        std::shared_ptr<const Analysis> b_range =
            whole ? std::shared_ptr<const Analysis>(b, &b->whole())
                  : b->analyze_range(t0, t1, [&](const LoadProgress&) { return wanted(); });
        if (!b_range || !b_range->error.empty() || !wanted()) return Compared{};
        Compared out;
        out.diff = std::make_shared<const DiffResult>(diff_analyses(*a, *b_range));
        out.tree_b = std::make_shared<const CallTree>(
            build_call_tree(*b_range, TreeDirection::top_down, wanted));
        return out;
      },
      [this](Compared c) {
        if (!c.diff) return showEmpty(tr("Cannot analyse trace B over the range"));
        pending_diff_ = std::move(c.diff);
        tree_b_ = std::move(c.tree_b);
        showWhenComplete();
      });
  // A's tree is the one the Call tree and Flame graph tabs draw (built once).
  trees_->request(a, TreeDirection::top_down, this,
                  [this, asked = a.get()](std::shared_ptr<const CallTree> tree) {
                    if (asked != range_.get()) return;  // a later range superseded it
                    tree_a_ = std::move(tree);
                    showWhenComplete();
                  });
}

void CompareView::showWhenComplete() {
  if (!tree_a_ || !pending_diff_) return;
  flame_->setTrees(tree_a_, std::move(tree_b_));
  showDiff(std::move(pending_diff_));
}

void CompareView::showEmpty(const QString& why) {
  diff_.reset();
  sites_model_->setDiff(nullptr);
  pools_model_->setDiff(nullptr);
  timeline_->clear();
  flame_->setTrees(nullptr, nullptr);
  heading_->setText(why);
  // Nothing left to wait for once A is in place: the empty state is the answer.
  if (range_ && !b_loading_) setReady();
}

void CompareView::showDiff(std::shared_ptr<const DiffResult> diff) {
  diff_ = std::move(diff);
  sites_model_->setDiff(diff_);
  pools_model_->setDiff(diff_);
  for (int c = CompareSitesModel::pool; c < CompareSitesModel::column_count; ++c)
    sites_view_->resizeColumnToContents(c);
  for (int c = 0; c < ComparePoolsModel::column_count; ++c) pools_view_->resizeColumnToContents(c);
  // Every pool column in sight, up to half the tab; the chart gets the rest.
  pools_view_->setMinimumWidth(
      std::min(pools_view_->header()->length() + 2 * pools_view_->frameWidth() + 4,
               std::max(width() / 2, 300)));
  updateTimeline();
  heading_->setText(headingText());
  setReady();
}

void CompareView::setReady() {
  ready_ = true;
  emit ready();
}

void CompareView::updateTimeline() {
  if (!session_ || !b_session_) return timeline_->clear();
  const bool whole = wholeRange();
  const std::uint64_t end =
      std::max(session_->whole().summary.last_event_ns, b_session_->whole().summary.last_event_ns);
  const std::uint64_t t0 = whole ? 0 : t0_, t1 = whole ? end : t1_;
  const SeriesId used{SeriesKind::process_used, {}};
  auto curve = [&](const Session& s, const QString& side, const QColor& colour) {
    Envelope e = s.series(used, t0, t1, kTimelinePoints);
    const QString label = tr("%1: %2 (peak %3)")
                              .arg(side, QFileInfo(QString::fromStdString(s.path())).fileName(),
                                   bytesText(e.max_of_all));
    return CompareCurve{label, colour, std::move(e)};
  };
  timeline_->setCurves(t0, t1,
                       {curve(*session_, tr("A"), CompareTimeline::kColourA),
                        curve(*b_session_, tr("B"), CompareTimeline::kColourB)});
}

void CompareView::setFilter(const QString& text) {
  if (filter_->text() != text) filter_->setText(text);
  sites_model_->setFilter(text);
}

QStringList CompareView::parts() const {
  return {"sites", "flame"};
}

void CompareView::showPart(const QString& part) {
  if (part == "sites") tabs_->setCurrentWidget(sites_view_);
  if (part == "flame") tabs_->setCurrentWidget(flame_);
}

QString CompareView::headingText() const {
  if (!diff_ || !session_ || !b_session_) return heading_->text();
  const Summary& a = diff_->summary[0];
  const Summary& b = diff_->summary[1];
  const QString span = wholeRange()
                           ? tr("whole traces")
                           : tr("range %1 – %2 of both").arg(durationText(t0_), durationText(t1_));
  return tr("A: %1 → B: %2 (%3). Peak used %4 → %5 (%6), leaked %7 → %8 (%9), allocations "
            "%10 → %11 (%12); %13 sites changed.")
      .arg(QString::fromStdString(session_->path()), QString::fromStdString(b_session_->path()),
           span, bytesText(a.peak_used_bytes), bytesText(b.peak_used_bytes),
           signedBytesText(a.peak_used_bytes, b.peak_used_bytes), bytesText(a.leaked.bytes),
           bytesText(b.leaked.bytes), signedBytesText(a.leaked.bytes, b.leaked.bytes))
      .arg(countText(a.allocations), countText(b.allocations),
           signedCountText(a.allocations, b.allocations), countText(diff_->sites.size()));
}

void addCompareView(MainWindow& window, CallTreeCache* trees) {
  auto* view = new CompareView(trees);
  window.addView("compare", QObject::tr("Compare"), view);
  // File → Compare with…, after Open Recent.
  QMenu* file =
      window.menuBar()->actions().isEmpty() ? nullptr : window.menuBar()->actions().front()->menu();
  if (!file) return;
  auto* action = new QAction(QObject::tr("Compare &with..."), file);
  QObject::connect(action, &QAction::triggered, view, [view, &window] {
    window.showView("compare");
    view->chooseCompare();
  });
  const auto actions = file->actions();
  file->insertAction(actions.size() > 2 ? actions[2] : nullptr, action);
}

bool openCompareIn(MainWindow& window, const QString& path) {
  auto* view = qobject_cast<CompareView*>(window.view("compare"));
  if (!view) return false;
  view->openCompare(path);
  window.showView("compare");  // what --compare asks to see, unless --view names another tab
  return true;
}

}  // namespace memtrail::gui
