// Which sites a filter keeps, one rule for the CLI and the GUI: a site
// matches when a frame of its backtrace holds the filter's text (and a
// function of a call tree when its symbol does: the GUI's tree views).
// `report --filter-function NAME` (heaptrack_print's --filter-bt-function)
// looks in function names, as written; the GUI's filter boxes (Leaks, Top
// sites, Sites over time, Scopes) look in the function, the source file and
// the module, ignoring case.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "memtrail/analysis.hpp"
#include "memtrail/call_tree.hpp"

namespace memtrail {

struct SiteFilter {
  enum class Fields { function, function_file_module };
  enum class Case { exact, ignore };  // ignore: ASCII letters only

  std::string text;  // empty: every site matches
  Fields fields = Fields::function;
  Case letter_case = Case::exact;

  // `report --filter-function NAME`.
  static SiteFilter function_name(std::string name);
  // The GUI's filter boxes: function, file or module, any case.
  static SiteFilter search_box(std::string text);

  bool matches(const Site& site) const { return matches(site.frames); }
  bool matches(const FrameList& frames) const;
  // A call tree's function: its name (as a frame's function), file, module.
  bool matches(const TreeSymbol& symbol) const;
};

// Whether `haystack` holds `needle` (empty: always), ASCII letters compared
// without case when `letter_case` says so.
bool holds_text(std::string_view haystack, std::string_view needle, SiteFilter::Case letter_case);

// Keeps the sites with a frame whose function name contains `name`, and
// recomputes from them what sites add up to: leak sites, the leak totals by
// class, and the summary's allocations, bytes allocated, temporary
// allocations and leaked bytes/blocks (leaf pools, as ever). Peaks,
// timelines, pools, histograms and the runtime class stay the whole
// process's: they are not sums over sites. Returns the sites kept.
std::size_t keep_sites_with_function(Analysis& a, const std::string& name);

}  // namespace memtrail
