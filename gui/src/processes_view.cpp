#include "processes_view.hpp"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QTreeWidget>
#include <QVBoxLayout>

#include "format.hpp"

namespace memtrail::gui {

namespace {

const QStringList& columnNames() {
  static const QStringList names = {"pid",  "ppid",   "exec",   "program", "events",
                                    "peak", "leaked", "blocks", "exit",    "command"};
  return names;
}

QStringList columnTitles() {
  return {QObject::tr("PID"),     QObject::tr("PPID"),   QObject::tr("Exec"),
          QObject::tr("Program"), QObject::tr("Events"), QObject::tr("Peak used"),
          QObject::tr("Leaked"),  QObject::tr("Blocks"), QObject::tr("Exit"),
          QObject::tr("Command")};
}

QString exitText(const RunProcess& p) {
  return p.exit_status ? QString::number(*p.exit_status) : QStringLiteral("—");
}

}  // namespace

ProcessesView::ProcessesView(QWidget* parent)
    : SessionView(parent),
      heading_(new QLabel),
      filter_(new QLineEdit),
      table_(new QTreeWidget),
      open_(new QPushButton(tr("Open the selected process"))) {
  heading_->setWordWrap(true);
  filter_->setPlaceholderText(tr("Filter by program"));
  filter_->setClearButtonEnabled(true);
  table_->setRootIsDecorated(false);
  table_->setUniformRowHeights(true);
  table_->setHeaderLabels(columnTitles());
  table_->header()->setStretchLastSection(true);
  open_->setEnabled(false);
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(open_);
  buttons->addStretch(1);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(heading_);
  layout->addWidget(filter_);
  layout->addWidget(table_, 1);
  layout->addLayout(buttons);
  connect(table_, &QTreeWidget::itemActivated, this, [this] { chooseCurrent(); });
  connect(filter_, &QLineEdit::textChanged, this, &ProcessesView::setFilter);
  connect(open_, &QPushButton::clicked, this, [this] { chooseCurrent(); });
  connect(table_, &QTreeWidget::currentItemChanged, this, [this](QTreeWidgetItem* item) {
    const int i = item ? table_->indexOfTopLevelItem(item) : -1;
    open_->setEnabled(run_ && i >= 0 && run_->processes[i].header_error.empty());
  });
  rebuildRows();
}

int ProcessesView::columnIndex(const QString& name) {
  return static_cast<int>(columnNames().indexOf(name));
}

int ProcessesView::rowCount() const {
  return table_->topLevelItemCount();
}

QString ProcessesView::cell(int row, int column) const {
  QTreeWidgetItem* item = table_->topLevelItem(row);
  return item ? item->text(column) : QString();
}

QString ProcessesView::heading() const {
  return heading_->text();
}

bool ProcessesView::isReady() const {
  if (!run_) return true;
  for (const Figures& f : figures_)
    if (!f.known) return false;
  return true;
}

void ProcessesView::setSession(std::shared_ptr<const Session> session) {
  session_ = std::move(session);
  if (!session_ || !run_) return rebuildRows();
  // The process on screen: its figures are the session's.
  for (std::size_t i = 0; i < run_->processes.size(); ++i)
    if (run_->processes[i].file == session_->path() && !figures_[i].known) {
      const Summary& s = session_->whole().summary;
      figures_[i] = {true, {}, s.events, s.peak_used_bytes, s.leaked.bytes, s.leaked.blocks};
    }
  rebuildRows();
  if (isReady()) emit ready();
}

void ProcessesView::setLoading(const std::string& file) {
  loading_ = file;
  if (!analyzing_) analyzeNext();
}

void ProcessesView::setRun(const std::optional<RunIndex>& run) {
  tasks_.cancel();
  analyzing_ = false;
  run_ = run;
  figures_.assign(run_ ? run_->processes.size() : 0, Figures{});
  if (run_)
    for (std::size_t i = 0; i < run_->processes.size(); ++i)
      if (!run_->processes[i].header_error.empty())
        figures_[i] = {true, run_->processes[i].header_error};
  rebuildRows();
  // After the window's loadStarted for the run's first process (it follows
  // runChanged at once), so that process is left to its Session.
  QMetaObject::invokeMethod(
      this,
      [this] {
        if (!analyzing_) analyzeNext();
      },
      Qt::QueuedConnection);
}

void ProcessesView::rebuildRows() {
  table_->clear();
  if (!run_) {
    heading_->setText(
        tr("Not a run directory: open the directory `memtrail run` wrote "
           "(File → Open, select the directory, Open) to list its processes."));
    return;
  }
  heading_->setText(tr("Run %1: %2 processes. Double-click a process (or select it and press "
                       "Enter) to open its trace.")
                        .arg(QString::fromStdString(run_->directory))
                        .arg(run_->processes.size()));
  for (std::size_t i = 0; i < run_->processes.size(); ++i) {
    const RunProcess& p = run_->processes[i];
    auto* item = new QTreeWidgetItem(table_);
    item->setText(0, QString::number(p.pid));
    item->setText(1, QString::number(p.ppid));
    item->setText(2, QString::number(p.sequence));
    item->setText(3, QString::fromStdString(p.program));
    item->setText(8, exitText(p));
    item->setText(9, QString::fromStdString(p.command_line));
    QFont font = item->font(0);
    font.setBold(session_ && p.file == session_->path());  // the process on screen
    for (int c = 0; c < columnNames().size(); ++c) item->setFont(c, font);
    showFigures(i);
  }
  for (int c = 0; c < columnNames().size() - 1; ++c) table_->resizeColumnToContents(c);
  applyFilter();
}

void ProcessesView::setFilter(const QString& text) {
  if (filter_->text() != text) filter_->setText(text);  // comes back here through textChanged
  applyFilter();
}

void ProcessesView::applyFilter() {
  filter_->setVisible(run_.has_value());
  for (int row = 0; row < table_->topLevelItemCount(); ++row) {
    QTreeWidgetItem* item = table_->topLevelItem(row);
    item->setHidden(!item->text(3).contains(filter_->text(), Qt::CaseInsensitive));
  }
}

bool ProcessesView::rowHidden(int row) const {
  const QTreeWidgetItem* item = table_->topLevelItem(row);
  return !item || item->isHidden();
}

void ProcessesView::showFigures(std::size_t i) {
  QTreeWidgetItem* item = table_->topLevelItem(static_cast<int>(i));
  if (!item) return;
  const Figures& f = figures_[i];
  if (!f.error.empty()) {
    item->setText(4, tr("unreadable: %1").arg(QString::fromStdString(f.error)));
    return;
  }
  const QString pending = f.known ? QString() : tr("…");
  item->setText(4, f.known ? countText(f.events) : pending);
  item->setText(5, f.known ? bytesText(f.peak) : pending);
  item->setText(6, f.known ? bytesText(f.leaked_bytes) : pending);
  item->setText(7, f.known ? countText(f.leaked_blocks) : pending);
}

// One process at a time, as `memtrail report` does for a run (without
// symbolizing: the figures shown do not depend on it).
void ProcessesView::analyzeNext() {
  if (!run_) return;
  std::size_t i = 0;
  auto left_to_session = [&] { return run_->processes[i].file == loading_; };
  while (i < figures_.size() && (figures_[i].known || left_to_session())) ++i;
  if (i == figures_.size()) {
    if (isReady()) emit ready();
    return;
  }
  const std::string file = run_->processes[i].file;
  analyzing_ = true;
  ++analyses_started_;
  tasks_.run<Figures>(
      [file](const BackgroundTasks::Wanted& wanted) {
        AnalysisOptions options;
        options.symbolize = false;
        const Analysis a = analyze(file, options, [&](std::uint64_t) { return wanted(); });
        if (!a.error.empty()) return Figures{true, a.error};
        const Summary& s = a.summary;
        return Figures{true, {}, s.events, s.peak_used_bytes, s.leaked.bytes, s.leaked.blocks};
      },
      [this, i](Figures f) {
        analyzing_ = false;
        if (!figures_[i].known) figures_[i] = std::move(f);
        showFigures(i);
        analyzeNext();
      });
}

void ProcessesView::chooseCurrent() {
  const int i = table_->indexOfTopLevelItem(table_->currentItem());
  if (!run_ || i < 0 || !run_->processes[static_cast<std::size_t>(i)].header_error.empty()) return;
  emit processChosen(static_cast<std::size_t>(i));
}

}  // namespace memtrail::gui
