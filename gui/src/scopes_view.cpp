#include "scopes_view.hpp"

#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QSplitter>
#include <QTreeWidget>
#include <QVBoxLayout>
#include <cmath>

#include "format.hpp"
#include "memtrail/site_caller.hpp"
#include "memtrail/site_filter.hpp"
#include "scopes_chart.hpp"

namespace memtrail::gui {

namespace {

const QStringList& columnNames() {
  static const QStringList names = {"name",    "kind",        "pool",   "entries",
                                    "escaped", "max_escaped", "growth", "live_at_end",
                                    "resets",  "spills",      "spilled"};
  return names;
}

QStringList columnTitles() {
  return {
      QObject::tr("Scope"),          QObject::tr("Kind"),          QObject::tr("Pool"),
      QObject::tr("Entries"),        QObject::tr("Bytes escaped"), QObject::tr("Most in one entry"),
      QObject::tr("Growth / entry"), QObject::tr("Live at end"),   QObject::tr("Resets"),
      QObject::tr("Spills"),         QObject::tr("Spilled")};
}

// As `report` prints it: "256.0 B".
QString growthText(double bytes) {
  return QStringLiteral("%1 B").arg(bytes, 0, 'f', 1);
}

QString emptyStateText() {
  return QObject::tr(
      "No scopes in this range. A scope is a named stretch of a thread's work that is entered "
      "again and again: memtrail_scope_begin/end(\"NAME\") or memtrail_iteration_begin/end "
      "(memtrail/c_api.h), memtrail.scope / memtrail.iteration in Python, or the workspaces "
      "and tidy scopes of the allocator library. For each, this tab shows the memory each entry "
      "leaves behind and the sites that make it grow. A program that only marks its loop: "
      "memtrail report --iteration-mark NAME.");
}

}  // namespace

ScopesView::ScopesView(QWidget* parent)
    : SessionView(parent),
      heading_(new QLabel),
      filter_(new QLineEdit),
      empty_(new QLabel),
      table_(new QTreeWidget),
      chart_(new ScopesChart),
      sites_label_(new QLabel),
      sites_(new QTreeWidget) {
  heading_->setWordWrap(true);
  heading_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  filter_->setPlaceholderText(tr("Filter by function, file or module"));
  filter_->setClearButtonEnabled(true);
  empty_->setWordWrap(true);
  empty_->setAlignment(Qt::AlignCenter);
  empty_->setMargin(80);
  empty_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  table_->setRootIsDecorated(false);
  table_->setUniformRowHeights(true);
  table_->setHeaderLabels(columnTitles());
  table_->header()->setStretchLastSection(false);
  sites_->setRootIsDecorated(false);
  sites_->setUniformRowHeights(true);
  sites_->setHeaderLabels({tr("Growth / entry"), tr("Live at last entry"), tr("Allocated at")});
  sites_->header()->setStretchLastSection(true);
  auto* lower = new QWidget;
  auto* lower_layout = new QVBoxLayout(lower);
  lower_layout->setContentsMargins(0, 0, 0, 0);
  lower_layout->addWidget(sites_label_);
  lower_layout->addWidget(sites_, 1);
  auto* split = new QSplitter(Qt::Vertical);
  split->addWidget(table_);
  split->addWidget(chart_);
  split->addWidget(lower);
  split->setStretchFactor(0, 1);
  split->setStretchFactor(1, 3);
  split->setStretchFactor(2, 1);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(heading_);
  layout->addWidget(filter_);
  layout->addWidget(empty_, 1);
  layout->addWidget(split, 1);
  connect(table_, &QTreeWidget::currentItemChanged, this, [this](QTreeWidgetItem* item) {
    showScope(item ? table_->indexOfTopLevelItem(item) : -1);
  });
  connect(filter_, &QLineEdit::textChanged, this, &ScopesView::setFilter);
  fill();
}

void ScopesView::setSession(std::shared_ptr<const Session> session) {
  session_ = std::move(session);
  analysis_ = session_ ? std::shared_ptr<const Analysis>(session_, &session_->whole()) : nullptr;
  if (session_) {
    t0_ = session_->whole().summary.first_event_ns;
    t1_ = session_->whole().summary.last_event_ns;
  }
  fill();
  emit ready();
}

void ScopesView::setRange(std::uint64_t t0, std::uint64_t t1,
                          std::shared_ptr<const Analysis> range) {
  t0_ = t0;
  t1_ = t1;
  analysis_ = std::move(range);
  fill();
  emit ready();
}

void ScopesView::fill() {
  table_->clear();
  sites_->clear();
  const bool any = analysis_ && !analysis_->scopes.empty();
  table_->parentWidget()->setVisible(any);  // the splitter
  heading_->setVisible(any);
  filter_->setVisible(any);
  empty_->setVisible(!any);
  if (!analysis_) {
    empty_->setText(tr("Open a trace to see its scopes."));
    return;
  }
  if (!any) {
    empty_->setText(emptyStateText());
    return;
  }
  int growing = 0;
  for (const ScopeStats& sc : analysis_->scopes) {
    growing += std::llround(sc.growth_per_entry_bytes) >= 1;
    auto* item = new QTreeWidgetItem(
        table_,
        {QString::fromStdString(sc.info.name),
         QString::fromUtf8(std::string(to_string(sc.info.kind)).c_str()),
         QString::fromStdString(sc.pool_name), countText(sc.entries), bytesText(sc.bytes_escaped),
         bytesText(sc.max_escaped_per_entry), growthText(sc.growth_per_entry_bytes),
         bytesText(sc.live_bytes_at_end), countText(sc.workspace_resets), countText(sc.spills),
         bytesText(sc.spilled_bytes)});
    for (int c = 3; c < columnNames().size(); ++c)
      item->setTextAlignment(c, Qt::AlignRight | Qt::AlignVCenter);
    if (std::llround(sc.growth_per_entry_bytes) >= 1)
      item->setForeground(6, QColor(0xb0, 0x1e, 0x1e));
  }
  for (int c = 0; c < columnNames().size(); ++c) table_->resizeColumnToContents(c);
  heading_->setText(tr("%1 scopes in %2; %3 grow per entry (bytes allocated inside an entry and "
                       "still live at its end, rising from entry to entry: a loop that leaks).")
                        .arg(analysis_->scopes.size())
                        .arg(t0_ == analysis_->summary.first_event_ns && session_ &&
                                     t1_ == session_->whole().summary.last_event_ns &&
                                     t0_ == session_->whole().summary.first_event_ns
                                 ? tr("the whole trace")
                                 : tr("%1 – %2").arg(durationText(t0_), durationText(t1_)))
                        .arg(growing));
  // The scope that grows the most first, as report lists it.
  int first = 0;
  for (int i = 1; i < static_cast<int>(analysis_->scopes.size()); ++i)
    if (analysis_->scopes[i].growth_per_entry_bytes >
        analysis_->scopes[first].growth_per_entry_bytes)
      first = i;
  selectRow(first);
  applyFilter();
}

void ScopesView::setFilter(const QString& text) {
  if (filter_->text() != text) filter_->setText(text);  // comes back here through textChanged
  applyFilter();
}

bool ScopesView::scopeMatches(const ScopeStats& sc) const {
  const QString text = filter_->text();
  if (QString::fromStdString(sc.info.name).contains(text, Qt::CaseInsensitive)) return true;
  const SiteFilter filter = SiteFilter::search_box(text.toStdString());
  for (const GrowthSite& g : sc.growth_sites)
    if (filter.matches(analysis_->sites.at(g.site.value))) return true;
  return false;
}

// Hides the scopes that do not match; the selection moves to the first one
// shown when its scope was hidden, and its sites are listed again.
void ScopesView::applyFilter() {
  if (!analysis_) return;
  int current = table_->indexOfTopLevelItem(table_->currentItem()), first_shown = -1;
  for (int row = 0; row < table_->topLevelItemCount(); ++row) {
    const bool shown = scopeMatches(*scope(row));
    table_->topLevelItem(row)->setHidden(!shown);
    if (shown && first_shown < 0) first_shown = row;
  }
  if (current < 0 || rowHidden(current)) current = first_shown;
  if (current >= 0 && table_->indexOfTopLevelItem(table_->currentItem()) != current)
    selectRow(current);  // shows it
  else
    showScope(current);
}

bool ScopesView::rowHidden(int row) const {
  const QTreeWidgetItem* item = table_->topLevelItem(row);
  return !item || item->isHidden();
}

void ScopesView::showScope(int row) {
  sites_->clear();
  const ScopeStats* sc = scope(row);
  chart_->setScope(sc, t0_, t1_);
  if (!sc) {
    sites_label_->clear();
    return;
  }
  sites_label_->setText(
      sc->growth_sites.empty()
          ? tr("No site makes '%1' grow by a byte or more per entry%2.")
                .arg(QString::fromStdString(sc->info.name),
                     sc->entries < 2 ? tr(" (it needs two entries to measure)") : QString())
          : tr("Sites that make '%1' grow (most first):")
                .arg(QString::fromStdString(sc->info.name)));
  // A scope the filter names keeps all its sites; otherwise the matching ones.
  const bool named =
      QString::fromStdString(sc->info.name).contains(filter_->text(), Qt::CaseInsensitive);
  const SiteFilter filter = SiteFilter::search_box(filter_->text().toStdString());
  for (const GrowthSite& g : sc->growth_sites) {
    const Site& site = analysis_->sites.at(g.site.value);
    if (!named && !filter.matches(site)) continue;
    QString stack;
    for (const Frame& f : site.frames) stack += QString::fromStdString(f.describe()) + "\n";
    auto* item = new QTreeWidgetItem(
        sites_, {QStringLiteral("+%1").arg(growthText(g.bytes_per_entry)), bytesText(g.live_bytes),
                 site.frames.empty() ? tr("(no stack recorded)")
                                     : QString::fromStdString(caller_text(site.frames))});
    item->setTextAlignment(0, Qt::AlignRight | Qt::AlignVCenter);
    item->setTextAlignment(1, Qt::AlignRight | Qt::AlignVCenter);
    item->setToolTip(2, stack.trimmed());
  }
  sites_->resizeColumnToContents(0);
  sites_->resizeColumnToContents(1);
}

int ScopesView::columnIndex(const QString& name) {
  return static_cast<int>(columnNames().indexOf(name));
}

int ScopesView::rowCount() const {
  return table_->topLevelItemCount();
}

QString ScopesView::cell(int row, int column) const {
  const QTreeWidgetItem* item = table_->topLevelItem(row);
  return item ? item->text(column) : QString();
}

const ScopeStats* ScopesView::scope(int row) const {
  if (!analysis_ || row < 0 || row >= static_cast<int>(analysis_->scopes.size())) return nullptr;
  return &analysis_->scopes[static_cast<std::size_t>(row)];
}

void ScopesView::selectRow(int row) {
  if (QTreeWidgetItem* item = table_->topLevelItem(row)) table_->setCurrentItem(item);
}

int ScopesView::siteCount() const {
  return sites_->topLevelItemCount();
}

QString ScopesView::siteCell(int row, int column) const {
  const QTreeWidgetItem* item = sites_->topLevelItem(row);
  return item ? item->text(column) : QString();
}

QString ScopesView::heading() const {
  return heading_->isVisibleTo(this) ? heading_->text() : empty_->text();
}

bool ScopesView::showsEmptyState() const {
  return analysis_ && analysis_->scopes.empty();
}

}  // namespace memtrail::gui
