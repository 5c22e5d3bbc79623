// File → Open: a trace (*.mtr) or a `memtrail run` directory. Qt's file
// dialog in ExistingFile mode descends into a selected directory and its
// Open does nothing there; this one (Qt's own widgets, not the platform's,
// so it behaves alike everywhere) accepts a run directory selected in the
// list, or the run directory being shown when no file is selected.
#pragma once

#include <QFileDialog>

namespace memtrail::gui {

class TraceFileDialog : public QFileDialog {
  Q_OBJECT

 public:
  explicit TraceFileDialog(QWidget* parent = nullptr);
  // What Open chose: a trace file or a run directory; empty before.
  QString chosenPath() const { return chosen_; }

  // A directory that holds traces (*.mtr): what `memtrail run` writes.
  static bool holdsTraces(const QString& directory);

 public slots:
  void accept() override;

 private:
  QString chosen_;
};

}  // namespace memtrail::gui
