#include "caller_callee_view.hpp"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QSplitter>
#include <QTreeView>
#include <QVBoxLayout>
#include <algorithm>

#include "caller_callee_model.hpp"
#include "cost_bar_delegate.hpp"
#include "format.hpp"

namespace memtrail::gui {

namespace {

QTreeView* newTable(CallerCalleeModel* model, QWidget* parent) {
  auto* view = new QTreeView(parent);
  view->setRootIsDecorated(false);
  view->setUniformRowHeights(true);
  view->setAlternatingRowColors(true);
  view->setModel(model);
  view->setItemDelegate(new CostBarDelegate(CallerCalleeModel::kFractionRole, view));
  view->header()->setStretchLastSection(false);
  view->header()->setSortIndicator(CallerCalleeModel::peak, Qt::DescendingOrder);
  view->setSortingEnabled(true);
  view->header()->setMinimumSectionSize(60);
  return view;
}

// Twelve columns leave a stretched name column ~100 px: size it to the
// names instead, bounded, and the costs to their numbers.
void fitColumns(QTreeView* view) {
  for (int c = CallerCalleeModel::function; c <= CallerCalleeModel::location; ++c)
    view->resizeColumnToContents(c);
  const int names = view->columnWidth(CallerCalleeModel::function);
  view->setColumnWidth(CallerCalleeModel::function, std::clamp(names, 120, 320));
}

// A titled table for the right-hand side.
QWidget* titled(const QString& title, QTreeView* table, QWidget* parent) {
  auto* box = new QWidget(parent);
  auto* layout = new QVBoxLayout(box);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(new QLabel(title, box));
  table->setParent(box);
  layout->addWidget(table, 1);
  return box;
}

QString costsText(const TreeCosts& c) {
  return QObject::tr("%1 allocations (%2 temporary), %3 allocated, %4 at the peak, %5 leaked")
      .arg(countText(c[TreeCost::allocations]), countText(c[TreeCost::temporary]),
           bytesText(c[TreeCost::bytes]), bytesText(c[TreeCost::peak]),
           bytesText(c[TreeCost::leaked]));
}

}  // namespace

CallerCalleeView::CallerCalleeView(QWidget* parent) : SessionView(parent) {
  auto* layout = new QVBoxLayout(this);
  heading_ = new QLabel(tr("No trace loaded"), this);
  heading_->setWordWrap(true);
  layout->addWidget(heading_);

  auto* split = new QSplitter(Qt::Horizontal, this);
  auto* left = new QWidget(split);
  auto* left_layout = new QVBoxLayout(left);
  left_layout->setContentsMargins(0, 0, 0, 0);
  filter_ = new QLineEdit(left);
  filter_->setPlaceholderText(tr("Filter by function, file or module"));
  filter_->setClearButtonEnabled(true);
  left_layout->addWidget(filter_);
  functions_ = new CallerCalleeModel(CallerCalleeModel::Rows::functions, this);
  function_view_ = newTable(functions_, left);
  left_layout->addWidget(function_view_, 1);

  auto* right = new QWidget(split);
  auto* right_layout = new QVBoxLayout(right);
  right_layout->setContentsMargins(0, 0, 0, 0);
  selected_ = new QLabel(right);
  selected_->setWordWrap(true);
  right_layout->addWidget(selected_);
  auto* edges = new QSplitter(Qt::Vertical, right);
  callers_ = new CallerCalleeModel(CallerCalleeModel::Rows::callers, this);
  callees_ = new CallerCalleeModel(CallerCalleeModel::Rows::callees, this);
  caller_view_ = newTable(callers_, edges);
  callee_view_ = newTable(callees_, edges);
  const QString hint = tr(" (double-click one to select it)");
  edges->addWidget(titled(tr("Callers: who calls it") + hint, caller_view_, edges));
  edges->addWidget(titled(tr("Callees: whom it calls") + hint, callee_view_, edges));
  right_layout->addWidget(edges, 1);
  split->addWidget(left);
  split->addWidget(right);
  split->setStretchFactor(0, 1);
  split->setStretchFactor(1, 1);
  layout->addWidget(split, 1);

  connect(filter_, &QLineEdit::textChanged, this, &CallerCalleeView::setFilter);
  connect(function_view_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this](const QModelIndex& now) {
            const std::uint32_t f = functions_->functionAt(now.row());
            if (f != CallerCallee::kNone) showEdges(f);
          });
  connect(caller_view_, &QTreeView::doubleClicked, this,
          [this](const QModelIndex& i) { followEdge(callers_, i.row()); });
  connect(callee_view_, &QTreeView::doubleClicked, this,
          [this](const QModelIndex& i) { followEdge(callees_, i.row()); });
}

void CallerCalleeView::setSession(std::shared_ptr<const Session> session) {
  builder_.cancel();
  session_ = std::move(session);
  range_.reset();
  result_.reset();
  ready_ = false;
  kept_name_.clear();
  functions_->show(nullptr);
  callers_->show(nullptr);
  callees_->show(nullptr);
  selected_->clear();
  heading_->setText(session_ ? tr("Loading...") : tr("No trace loaded"));
}

void CallerCalleeView::setRange(std::uint64_t t0, std::uint64_t t1,
                                std::shared_ptr<const Analysis> range) {
  range_ = std::move(range);
  t0_ = t0;
  t1_ = t1;
  ready_ = false;
  if (!range_) return;
  heading_->setText(tr("Finding the callers and callees..."));
  build();
}

void CallerCalleeView::build() {
  builder_.run<std::shared_ptr<const CallerCallee>>(
      [a = range_](const BackgroundTasks::Wanted& wanted) {
        return std::make_shared<const CallerCallee>(build_caller_callee(*a, wanted));
      },
      [this](std::shared_ptr<const CallerCallee> result) { showResult(std::move(result)); });
}

void CallerCalleeView::showResult(std::shared_ptr<const CallerCallee> result) {
  result_ = std::move(result);
  functions_->show(result_);
  fitColumns(function_view_);
  // The function selected before the range changed, if the range has it
  // (and the user's filter shows it: a new range leaves the filter alone);
  // else the heaviest by the list's sort order.
  const std::uint32_t kept =
      kept_name_.isEmpty() ? CallerCallee::kNone : result_->find(kept_name_.toStdString());
  if (kept == CallerCallee::kNone || functions_->rowOf(kept) < 0 || !selectFunction(kept)) {
    if (functions_->rowCount() > 0)
      function_view_->setCurrentIndex(functions_->index(0, 0));
    else
      showEdges(CallerCallee::kNone);
  }
  heading_->setText(headingText());
  ready_ = true;
  emit ready();
}

void CallerCalleeView::showEdges(std::uint32_t function) {
  callers_->show(result_, function);
  callees_->show(result_, function);
  fitColumns(caller_view_);
  fitColumns(callee_view_);
  if (function != CallerCallee::kNone)
    kept_name_ = QString::fromStdString(result_->functions[function].symbol.name);
  selected_->setText(selectedText());
}

void CallerCalleeView::followEdge(CallerCalleeModel* model, int row) {
  const std::uint32_t f = model->functionAt(row);
  if (f != CallerCallee::kNone) selectFunction(f);
}

void CallerCalleeView::setFilter(const QString& text) {
  if (filter_->text() != text) filter_->setText(text);  // comes back here through textChanged
  if (functions_->filter() == text) return;
  const std::uint32_t was = selectedFunction();
  functions_->setFilter(text);
  const int row = functions_->rowOf(was);
  if (row >= 0) function_view_->setCurrentIndex(functions_->index(row, 0));
}

bool CallerCalleeView::selectFunction(std::uint32_t function) {
  if (!result_ || function >= result_->functions.size()) return false;
  if (functions_->rowOf(function) < 0) setFilter({});  // the filter hid it
  const QModelIndex at = functions_->index(functions_->rowOf(function), 0);
  function_view_->setCurrentIndex(at);
  function_view_->scrollTo(at);
  showEdges(function);  // also when it was current already
  return true;
}

bool CallerCalleeView::selectFunction(const QString& name) {
  return result_ && selectFunction(result_->find(name.toStdString()));
}

std::uint32_t CallerCalleeView::selectedFunction() const {
  return callers_->of();
}

QString CallerCalleeView::headingText() const {
  if (!range_ || !result_) return heading_->text();
  const Summary& whole = session_ ? session_->whole().summary : range_->summary;
  const bool all = t0_ <= whole.first_event_ns && t1_ >= whole.last_event_ns;
  const QString span =
      all ? tr("the whole trace") : tr("%1 – %2").arg(durationText(t0_), durationText(t1_));
  return tr("Callers and callees of %1: %2 functions; %3.")
      .arg(span, countText(result_->functions.size()), costsText(result_->total));
}

QString CallerCalleeView::selectedText() const {
  const std::uint32_t f = selectedFunction();
  if (!result_ || f == CallerCallee::kNone) return tr("No function selected");
  const FunctionCosts& fc = result_->functions[f];
  return tr("<b>%1</b> — inclusive: %2.<br>Itself: %3.")
      .arg(QString::fromStdString(fc.symbol.name).toHtmlEscaped(), costsText(fc.inclusive),
           costsText(fc.self));
}

}  // namespace memtrail::gui
