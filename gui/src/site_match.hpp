// The GUI's filter by function, file or module, one rule for every list of
// sites (Leaks, Top sites, Sites over time, Scopes' growing sites): a site
// matches when any frame of its stack contains the text, ignoring case; a
// function of the call tree (Caller/Callee's list) when its name, file or
// module does.
#pragma once

#include <QString>

#include "memtrail/analysis.hpp"
#include "memtrail/call_tree.hpp"

namespace memtrail::gui {

// True for every site when `filter` is empty.
bool site_matches(const Site& site, const QString& filter);
bool symbol_matches(const TreeSymbol& symbol, const QString& filter);

}  // namespace memtrail::gui
