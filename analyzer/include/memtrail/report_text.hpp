// Human-readable report of an Analysis: the text `memtrail report` prints.
// Sections: summary, leaks (direct, indirect, then reachable; sites with
// their backtraces), top sites (caller line and backtrace), pools, scopes,
// memory over time (report_chart.hpp), histograms, and LSan's closing
// `SUMMARY: memtrail: N byte(s) leaked in M allocation(s).` line (of an
// attached process, which kept running: "... still live at detach").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "memtrail/analysis.hpp"
#include "memtrail/leak_kinds.hpp"

namespace memtrail {

struct TextReportOptions {
  std::size_t top = 10;                   // sites per list
  std::size_t stack_depth = 12;           // frames printed per stack (--num-callers)
  LeakKinds leak_kinds = kReportedKinds;  // leak sites listed (--show-leak-kinds)
};

std::string report_text(const Analysis& a, const TextReportOptions& options = {});

// "12 ns", "3.40 us", "1.25 ms", "2.000 s".
std::string format_duration(std::uint64_t ns);
// "scope 'X' grows N bytes per iteration" for each scope whose growth per
// entry rounds to a byte or more, each with the sites that grow
// (report_scope_growth.cpp); empty when nothing grows.
// Loops (ScopeKind::iteration scopes: marked by the program, or
// --iteration-mark) are left out when `with_loops` is false.
std::string scope_growth_text(const Analysis& a, std::size_t stack_depth = 8,
                              bool with_loops = true);
// The report's LOOPS section, first after the summary: for each loop, its
// iterations and growth per iteration, with the sites that grow most (at
// most `top`); empty when the trace has no loop.
std::string loops_text(const Analysis& a, std::size_t stack_depth, std::size_t top);
// One stack, one frame per line, each line prefixed by `indent` (and by
// "#N " when numbered, as LSan's and `check`'s failure messages); at most
// `depth` frames, then "... N more frames"; "(no stack recorded)" if empty.
enum class StackStyle { plain, numbered };
std::string format_stack(const FrameList& frames, std::size_t depth, const std::string& indent,
                         StackStyle style = StackStyle::plain);

}  // namespace memtrail
