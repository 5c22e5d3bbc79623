// The Leaks tab's source viewer: the file of a frame with its line
// highlighted and centred, when the file exists on disk; otherwise one line
// saying "source not found: PATH".
#pragma once

#include <QPlainTextEdit>
#include <QString>

namespace memtrail::gui {

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
