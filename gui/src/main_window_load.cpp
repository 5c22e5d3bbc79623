// MainWindow: opening traces (File menu, recent files, run directories) and
// the background load.
#include <QAction>
#include <QApplication>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QMenuBar>
#include <QSettings>
#include <QStatusBar>

#include "background.hpp"
#include "load_status.hpp"
#include "main_window.hpp"
#include "timing.hpp"
#include "trace_file_dialog.hpp"

namespace memtrail::gui {

namespace {
constexpr int kMaxRecent = 8;
const char* const kRecentKey = "recentFiles";
}  // namespace

void MainWindow::buildMenus() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  file->addAction(tr("&Open..."), QKeySequence::Open, this, &MainWindow::openFileDialog);
  recent_menu_ = file->addMenu(tr("Open &Recent"));
  process_menu_ = file->addMenu(tr("&Process of the Run"));
  file->addSeparator();
  file->addAction(tr("&Quit"), QKeySequence::Quit, qApp, &QApplication::closeAllWindows);
  QMenu* view = menuBar()->addMenu(tr("&View"));
  view->addAction(tr("&Whole Trace"), QKeySequence(Qt::Key_Escape), this, &MainWindow::resetRange);
  view->addAction(tr("Go to &Peak Used"), QKeySequence(Qt::CTRL | Qt::Key_P), this,
                  &MainWindow::goToPeakUsed);
  rebuildRecentMenu();
  rebuildProcessMenu();
}

void MainWindow::openFileDialog() {
  // A trace, or a run directory (which getOpenFileName cannot return).
  auto* dialog = new TraceFileDialog(this);
  dialog->setAttribute(Qt::WA_DeleteOnClose);
  connect(dialog, &QDialog::accepted, this, [this, dialog] {
    if (!dialog->chosenPath().isEmpty()) openPath(dialog->chosenPath());
  });
  dialog->open();
}

QStringList MainWindow::recentFiles() const {
  return QSettings().value(kRecentKey).toStringList();
}

void MainWindow::rememberRecent(const QString& path) {
  if (!remember_recent_) return;
  QStringList list = recentFiles();
  const QString full = QFileInfo(path).absoluteFilePath();
  list.removeAll(full);
  list.prepend(full);
  while (list.size() > kMaxRecent) list.removeLast();
  QSettings().setValue(kRecentKey, list);
  rebuildRecentMenu();
}

void MainWindow::rebuildRecentMenu() {
  recent_menu_->clear();
  for (const QString& path : recentFiles())
    recent_menu_->addAction(path, this, [this, path] { openPath(path); });
  recent_menu_->setEnabled(!recent_menu_->isEmpty());
}

void MainWindow::rebuildProcessMenu() {
  process_menu_->clear();
  if (run_)
    for (std::size_t i = 0; i < run_->processes.size(); ++i) {
      const RunProcess& p = run_->processes[i];
      QString label =
          QStringLiteral("%1  %2  %3")
              .arg(p.pid)
              .arg(QString::fromStdString(p.program), QString::fromStdString(p.command_line));
      QAction* a = process_menu_->addAction(
          label, this, [this, file = p.file] { startLoad(QString::fromStdString(file)); });
      a->setCheckable(true);
      a->setChecked(QString::fromStdString(p.file) == file_);
      a->setEnabled(p.header_error.empty());
    }
  process_menu_->setEnabled(run_ && run_->processes.size() > 1);
}

bool MainWindow::openProcess(std::size_t index) {
  if (!run_ || index >= run_->processes.size() || !run_->processes[index].header_error.empty())
    return false;
  startLoad(QString::fromStdString(run_->processes[index].file));
  return true;
}

void MainWindow::openPath(const QString& path) {
  const std::string p = path.toStdString();
  if (!is_run_directory(p)) {
    if (run_) {
      run_.reset();
      emit runChanged();
    }
    startLoad(path);
    return;
  }
  std::string error;
  auto run = read_run(p, &error);
  if (!run) return failLoad(QString::fromStdString(error));
  // The first readable process by start time: the run's main program.
  auto first = std::find_if(run->processes.begin(), run->processes.end(),
                            [](const RunProcess& r) { return r.header_error.empty(); });
  if (first == run->processes.end())
    return failLoad(tr("%1: no readable trace in the run").arg(path));
  const QString file = QString::fromStdString(first->file);
  run_ = std::move(run);
  emit runChanged();
  rememberRecent(path);
  startLoad(file);
}

void MainWindow::startLoad(const QString& file) {
  cancelLoad();
  clearSession();
  loading_ = true;
  file_ = file;
  last_error_.clear();
  emit loadStarted(file);
  auto state = std::make_shared<LoadState>();
  load_status_->follow(state);
  updateStatus();
  loader_->run<OpenResult>(
      [path = file.toStdString(), state](const BackgroundTasks::Wanted& wanted) {
        return Session::open(path, SessionOptions{},
                             [&](const LoadProgress& p) { return state->update(p) && wanted(); });
      },
      [this, file](OpenResult r) { finishLoad(std::move(r), file); });
}

void MainWindow::finishLoad(OpenResult r, const QString& file) {
  loading_ = false;
  load_status_->stop();
  if (!r.session) {
    if (r.error == SessionError::cancelled) {
      file_.clear();
      updateStatus();
      status_label_->setText(tr("loading cancelled"));
      emit loadCancelled();
      return;
    }
    return failLoad(QString::fromStdString(r.message.empty() ? error_name(r.error) : r.message));
  }
  session_ = std::move(r.session);
  if (!run_) rememberRecent(file);
  rebuildProcessMenu();
  timing_mark("loaded");
  all_ready_sent_ = false;
  for (const auto& v : views_) v.view->setSession(session_);
  resetRange();
  if (!r.warning.empty()) statusBar()->showMessage(QString::fromStdString(r.warning), 10000);
  emit loaded();
}

void MainWindow::failLoad(const QString& message) {
  loading_ = false;
  load_status_->stop();
  file_.clear();
  clearSession();
  last_error_ = message;
  status_label_->setText(tr("cannot load: %1").arg(message));
  if (error_dialogs_) {
    if (error_dialog_) error_dialog_->deleteLater();
    error_dialog_ = new QMessageBox(QMessageBox::Critical, tr("memtrail: cannot load the trace"),
                                    message, QMessageBox::Ok, this);
    error_dialog_->setAttribute(Qt::WA_DeleteOnClose);
    error_dialog_->open();
  }
  emit loadFailed(message);
}

void MainWindow::cancelLoad() {
  if (!loading_) return cancelRange();  // the status bar's Cancel during a range
  loader_->cancel();                    // the worker's progress callback now returns false
  loading_ = false;
  load_status_->stop();
  file_.clear();
  updateStatus();
  status_label_->setText(tr("loading cancelled"));
  emit loadCancelled();
}

bool MainWindow::isLoading() const {
  return loading_;
}

void MainWindow::clearSession() {
  ranger_->cancel();
  range_pending_ = false;
  setViewsGreyed(false);
  if (!session_) return;
  session_.reset();
  range_from_ = range_to_ = 0;
  range_analysis_.reset();
  moment_ = 0;
  moment_is_peak_ = true;
  for (const auto& v : views_) v.view->setSession(nullptr);
  rebuildProcessMenu();
  updateStatus();
}

QString MainWindow::statusText() const {
  return status_label_->text();
}

}  // namespace memtrail::gui
