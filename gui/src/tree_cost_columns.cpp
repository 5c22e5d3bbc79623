// The Call tree and Caller/Callee tabs' shared columns (tree_cost_columns.hpp).
#include "tree_cost_columns.hpp"

#include <QFileInfo>

namespace memtrail::gui {

const char* TreeCostColumns::columnName(int column) {
  static const char* const names[] = {
      "Function",           "Peak",      "Peak (self)",      "Allocations",
      "Allocations (self)", "Temporary", "Temporary (self)", "Leaked",
      "Leaked (self)",      "Allocated", "Allocated (self)", "Location"};
  return column >= 0 && column < column_count ? names[column] : "";
}

QString symbolLocation(const TreeSymbol& s) {
  if (!s.file.empty())
    return QStringLiteral("%1:%2")
        .arg(QFileInfo(QString::fromStdString(s.file)).fileName())
        .arg(s.line);
  return QFileInfo(QString::fromStdString(s.module)).fileName();
}

QString symbolToolTip(const TreeSymbol& s) {
  QString tip = QString::fromStdString(s.name);
  if (!s.file.empty())
    tip += QStringLiteral("\n%1:%2").arg(QString::fromStdString(s.file)).arg(s.line);
  if (!s.module.empty()) tip += QStringLiteral("\n%1").arg(QString::fromStdString(s.module));
  return tip;
}

}  // namespace memtrail::gui
