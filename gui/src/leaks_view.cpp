#include "leaks_view.hpp"

#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QSplitter>
#include <QTreeView>
#include <QVBoxLayout>

#include "format.hpp"
#include "leaks_model.hpp"
#include "source_pane.hpp"

namespace memtrail::gui {

LeaksView::LeaksView(QWidget* parent) : SessionView(parent) {
  auto* layout = new QVBoxLayout(this);
  totals_ = new QLabel(tr("No trace loaded"), this);
  totals_->setWordWrap(true);
  layout->addWidget(totals_);
  filter_ = new QLineEdit(this);
  filter_->setPlaceholderText(tr("Filter by function, file or module"));
  filter_->setClearButtonEnabled(true);
  layout->addWidget(filter_);
  auto* split = new QSplitter(Qt::Vertical, this);
  model_ = new LeaksModel(this);
  tree_ = new QTreeView(split);
  tree_->setModel(model_);
  tree_->setUniformRowHeights(true);
  // A label too long for its column keeps both ends: function and file:line.
  tree_->setTextElideMode(Qt::ElideMiddle);
  tree_->header()->setSortIndicator(-1, Qt::DescendingOrder);  // the model's own order first
  tree_->setSortingEnabled(true);
  tree_->header()->setSectionResizeMode(0, QHeaderView::Stretch);
  tree_->header()->setStretchLastSection(false);
  source_ = new SourcePane(split);
  split->addWidget(tree_);
  split->addWidget(source_);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 2);
  layout->addWidget(split, 1);
  connect(tree_->selectionModel(), &QItemSelectionModel::currentChanged, this,
          &LeaksView::showSelected);
  connect(filter_, &QLineEdit::textChanged, model_, &LeaksModel::setFilter);
}

void LeaksView::setSession(std::shared_ptr<const Session> session) {
  ready_ = false;
  model_->setAnalysis(nullptr);
  totals_->setText(session ? tr("Loading...") : tr("No trace loaded"));
  source_->showNothing(tr("select a leak site or frame to see its source"));
}

void LeaksView::setRange(std::uint64_t, std::uint64_t, std::shared_ptr<const Analysis> range) {
  model_->setAnalysis(range);
  for (int c = 1; c < LeaksModel::column_count; ++c) tree_->resizeColumnToContents(c);
  if (range) {
    const Leaks& l = range->leaks;
    totals_->setText(
        tr("%1 leak sites.  Direct: %2.  Indirect: %3.  Possible: %4.  Reachable: %5.%6")
            .arg(model_->siteCount())
            .arg(bytesAndBlocks(l.direct.bytes, l.direct.blocks),
                 bytesAndBlocks(l.indirect.bytes, l.indirect.blocks),
                 bytesAndBlocks(l.possible.bytes, l.possible.blocks),
                 bytesAndBlocks(l.reachable.bytes, l.reachable.blocks),
                 l.classified ? QString() : tr("  (no leak classes recorded: live = direct)")));
    if (model_->rowCount() > 0) {  // the largest site's stack and source show at once
      tree_->setCurrentIndex(model_->index(0, 0));
      tree_->expand(model_->index(0, 0));
    }
  }
  ready_ = range != nullptr;
  if (ready_) emit ready();
}

void LeaksView::showSelected() {
  const Frame* f = model_->frame(tree_->currentIndex().siblingAtColumn(0));
  if (!f) return source_->showNothing(tr("no frame recorded for this site"));
  source_->showSource(
      resolveSource(QString::fromStdString(f->file), QString::fromStdString(f->module)),
      static_cast<int>(f->line));
}

QString LeaksView::totalsText() const {
  return totals_->text();
}

}  // namespace memtrail::gui
