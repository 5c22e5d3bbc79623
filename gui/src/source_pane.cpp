#include "source_pane.hpp"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QFontDatabase>
#include <QTextBlock>

namespace memtrail::gui {

namespace {
// Source files past this size are not shown whole (a generated file).
constexpr qint64 kMaxSourceBytes = 4 << 20;
}  // namespace

QString resolveSource(const QString& file, const QString& module) {
  if (file.isEmpty() || QFileInfo(file).isAbsolute() || QFileInfo::exists(file)) return file;
  QDir dir = QFileInfo(module).dir();
  for (int up = 0; up < 5 && !module.isEmpty(); ++up) {
    const QString candidate = QDir::cleanPath(dir.filePath(file));
    if (QFileInfo(candidate).isFile()) return candidate;
    if (!dir.cdUp()) break;
  }
  return file;
}

SourcePane::SourcePane(QWidget* parent) : QPlainTextEdit(parent) {
  setReadOnly(true);
  setLineWrapMode(QPlainTextEdit::NoWrap);
  setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  showNothing(tr("select a leak site or frame to see its source"));
}

void SourcePane::showNothing(const QString& why) {
  has_source_ = false;
  highlighted_ = 0;
  setExtraSelections({});
  setPlainText(why);
}

void SourcePane::showSource(const QString& path, int line) {
  QFile file(path);
  if (path.isEmpty() || file.size() > kMaxSourceBytes || !file.open(QIODevice::ReadOnly)) {
    showNothing(path.isEmpty() ? tr("source not found: the frame names no file")
                               : tr("source not found: %1").arg(path));
    return;
  }
  // Line numbers in the text itself: simple, and they show in screenshots.
  QStringList lines = QString::fromUtf8(file.readAll()).split(QLatin1Char('\n'));
  const int width = static_cast<int>(QString::number(lines.size()).size());
  for (int i = 0; i < lines.size(); ++i)
    lines[i] = QStringLiteral("%1  %2").arg(i + 1, width).arg(lines[i]);
  setPlainText(lines.join(QLatin1Char('\n')));
  has_source_ = true;
  highlighted_ = line > 0 && line <= lines.size() ? line : 0;
  QList<QTextEdit::ExtraSelection> marks;
  if (highlighted_) {
    QTextEdit::ExtraSelection mark;
    mark.cursor = QTextCursor(document()->findBlockByNumber(highlighted_ - 1));
    mark.format.setBackground(QColor(0xff, 0xe0, 0x80));
    mark.format.setProperty(QTextFormat::FullWidthSelection, true);
    marks << mark;
    setTextCursor(mark.cursor);
    centerCursor();
  }
  setExtraSelections(marks);
}

}  // namespace memtrail::gui
