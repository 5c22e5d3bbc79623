#include "trace_file_dialog.hpp"

#include <QDir>
#include <QFileInfo>

namespace memtrail::gui {

TraceFileDialog::TraceFileDialog(QWidget* parent) : QFileDialog(parent, tr("Open trace or run")) {
  setOption(QFileDialog::DontUseNativeDialog);
  setFileMode(QFileDialog::ExistingFile);
  setAcceptMode(QFileDialog::AcceptOpen);
  setNameFilters({tr("memtrail traces and run directories (*.mtr)"), tr("All files (*)")});
  setLabelText(QFileDialog::FileName, tr("Trace or run:"));
}

bool TraceFileDialog::holdsTraces(const QString& directory) {
  const QFileInfo info(directory);
  return info.isDir() && !QDir(directory).entryList({"*.mtr"}, QDir::Files).isEmpty();
}

void TraceFileDialog::accept() {
  const QStringList selected = selectedFiles();
  // A run directory selected in the list, or shown with no file selected.
  QString run;
  if (selected.size() == 1 && holdsTraces(selected.front()))
    run = selected.front();
  else if ((selected.isEmpty() || QFileInfo(selected.front()).isDir()) &&
           holdsTraces(directory().absolutePath()))
    run = directory().absolutePath();
  if (!run.isEmpty()) {
    chosen_ = QDir::cleanPath(run);
    QDialog::accept();
    return;
  }
  // Set before the base class emits accepted().
  if (selected.size() == 1 && QFileInfo(selected.front()).isFile()) chosen_ = selected.front();
  QFileDialog::accept();
}

}  // namespace memtrail::gui
