// The column layout the Call tree and Caller/Callee tabs share: the function,
// each of the five tree costs inclusive then self, and the location; and how
// a function's symbol reads in the first and last columns.
#pragma once

#include <QString>
#include <Qt>

#include "memtrail/call_tree.hpp"

namespace memtrail::gui {

struct TreeCostColumns {
  enum Column {
    function,
    peak,
    peak_self,
    allocations,
    allocations_self,
    temporary,
    temporary_self,
    leaked,
    leaked_self,
    bytes,
    bytes_self,
    location,
    column_count
  };
  static constexpr int kNumberRole = Qt::UserRole;        // raw cost (cost columns)
  static constexpr int kFractionRole = Qt::UserRole + 1;  // cost / the total shown, 0..1

  static bool isCostColumn(int column) { return column > function && column < location; }
  static bool isSelfColumn(int column) { return isCostColumn(column) && column % 2 == 0; }
  static TreeCost costOf(int column) { return static_cast<TreeCost>((column - 1) / 2); }
  static int columnOf(TreeCost cost, bool self) { return 1 + 2 * static_cast<int>(cost) + self; }
  // The header's text of a column.
  static const char* columnName(int column);
};

// "file.cpp:LINE" of the symbol's first frame, or its module's file name.
QString symbolLocation(const TreeSymbol& s);
// The name, then file:line and the module, a line each where known.
QString symbolToolTip(const TreeSymbol& s);

}  // namespace memtrail::gui
