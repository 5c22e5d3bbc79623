// The Leaks tab's source viewer: the file of a frame with its line
// highlighted and centred, when the file exists on disk; otherwise one line
// saying "source not found: PATH".
#pragma once

#include <QPlainTextEdit>
#include <QString>

namespace memtrail::gui {

// Where `file` of a frame lies on this machine. DWARF often names a source
// relative to the compile directory ("../src/a.cpp" from build/): a relative
// path is tried from the working directory, then from the directory of the
// frame's module and up to four of its parents. The path as given when none
// exists.
QString resolveSource(const QString& file, const QString& module);

class SourcePane : public QPlainTextEdit {
  Q_OBJECT

 public:
  explicit SourcePane(QWidget* parent = nullptr);
  // Shows `file` around `line` (1-based; 0 = no line known).
  void showSource(const QString& file, int line);
  void showNothing(const QString& why);
  bool hasSource() const { return has_source_; }
  int highlightedLine() const { return highlighted_; }  // 0: none

 private:
  bool has_source_ = false;
  int highlighted_ = 0;
};

}  // namespace memtrail::gui
