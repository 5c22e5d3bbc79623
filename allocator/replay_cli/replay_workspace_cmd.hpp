// `memtrail replay TRACE --allocator workspace --iteration-mark NAME`: the
// what-if replay of a workspace (alloc/replay_workspace.hpp), printed.
#pragma once

#include <optional>
#include <string>

#include "memtrail/alloc/what_if.hpp"

namespace memtrail::cli {

struct WorkspaceReplayArgs {
  std::string trace, pool, mark, conf;
  bool json = false, partial = false;
  std::optional<alloc::SeriesWindow> series;  // --series: print the series before the summary
};

// Exit status: 0, or 2 after one line on stderr naming the problem.
int run_workspace_replay(const WorkspaceReplayArgs& args);

}  // namespace memtrail::cli
