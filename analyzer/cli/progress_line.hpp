// A progress line on stderr while a command reads a long trace:
//
//   memtrail report: 12.3 MiB of 40.0 MiB read (30%), ETA 4 s
//
// Only when stderr is a terminal and the work has taken over a second;
// nothing otherwise (a pipe, a file, CI logs, a short trace). The line is
// rewritten in place ('\r') and erased when the reading ends.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "memtrail/analysis.hpp"
#include "memtrail/progress_text.hpp"

namespace memtrail::cli {

class ProgressLine {
 public:
  // `enabled`: whether stderr is a terminal (the caller's isatty(2)).
  ProgressLine(std::string command, std::string trace, bool enabled);
  ~ProgressLine();  // erases the line if one was drawn
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  // The ProgressFn for analyze(): draws the line, never cancels.
  ProgressFn fn();
  // Erases the line now (before printing a report).
  void done();

 private:
  void tick();
  std::string command_, trace_;
  bool enabled_;
  bool drawn_ = false;
  std::uint64_t total_ = 0;
  std::chrono::steady_clock::time_point start_;
};

// Whether stderr is a terminal.
bool stderr_is_terminal();

// analyze() with a progress line for `command` when stderr is a terminal.
Analysis analyze_with_progress(const std::string& command, const std::string& trace,
                               const AnalysisOptions& options);

}  // namespace memtrail::cli
