// Prints the workspace what-if replay: text, or one JSON line.
#include "replay_workspace_cmd.hpp"

#include <cstdio>
#include <nlohmann/json.hpp>

#include "memtrail/alloc/errors.hpp"
#include "memtrail/alloc/replay_workspace.hpp"
#include "memtrail/size.hpp"

namespace memtrail::cli {
namespace {

using Result = alloc::WorkspaceReplayResult;

nlohmann::json to_json(const Result& r, const WorkspaceReplayArgs& a) {
  return {{"workspace_replay",
           {{"pool", a.pool},
            {"iteration_mark", a.mark},
            {"iterations_by", r.by_scope ? "scope" : "mark"},
            {"iterations", r.iterations},
            {"allocations", r.allocations},
            {"bytes", r.bytes},
            {"allocations_outside", r.allocations_outside},
            {"learned_size", r.learned_size},
            {"learned_after_iteration", r.learned_after_iteration},
            {"peak_iteration_bytes", r.peak_iteration_bytes},
            {"spills", r.spills},
            {"spills_after_learning", r.spills_after_learning},
            {"failed_allocations", r.failed_allocations},
            {"iterations_after_learning", r.iterations_after_learning},
            {"recorded_allocations_after_learning", r.recorded_allocations_after_learning},
            {"system_allocations_after_learning", r.system_allocations_after_learning},
            {"recorded_per_iteration", r.recorded_per_iteration_after_learning()},
            {"system_per_iteration", r.system_per_iteration_after_learning()},
            {"removed_per_iteration", r.removed_per_iteration()},
            {"escaping_allocations", r.escaping_allocations}}}};
}

void print_text(const Result& r, const WorkspaceReplayArgs& a) {
  auto u = [](std::uint64_t v) { return static_cast<unsigned long long>(v); };
  std::printf("workspace what-if: pool '%s', %llu iterations (%s '%s')\n", a.pool.c_str(),
              u(r.iterations), r.by_scope ? "entries of scope" : "between marks", a.mark.c_str());
  std::printf("allocations:        %llu in iterations (%s), %llu outside\n", u(r.allocations),
              format_size(r.bytes).c_str(), u(r.allocations_outside));
  std::printf("learned size:       %llu bytes (%s) after iteration %llu\n", u(r.learned_size),
              format_size(r.learned_size).c_str(), u(r.learned_after_iteration));
  std::printf("peak iteration:     %llu bytes\n", u(r.peak_iteration_bytes));
  std::printf("spills:             %llu (%llu after learning)\n", u(r.spills),
              u(r.spills_after_learning));
  if (r.failed_allocations)
    std::printf("failed:             %llu (policySpill FAIL: the program would throw)\n",
                u(r.failed_allocations));
  std::printf(
      "system allocations per iteration after learning: %.2f recorded, %.2f with the "
      "workspace: %.2f removed (%llu iterations)\n",
      r.recorded_per_iteration_after_learning(), r.system_per_iteration_after_learning(),
      r.removed_per_iteration(), u(r.iterations_after_learning));
  if (r.escaping_allocations)
    std::printf(
        "escaping:           %llu allocations outlive their iteration (detach or leverage them)\n",
        u(r.escaping_allocations));
}

}  // namespace

int run_workspace_replay(const WorkspaceReplayArgs& args) {
  Result r;
  std::string series;  // one JSON line, printed before the summary
  try {
    // The GUI's What-if view makes this same call (alloc/what_if.hpp).
    alloc::WhatIfPolicy policy;
    policy.allocator = "workspace";
    policy.pool = args.pool;
    policy.mark = args.mark;
    policy.conf = args.conf;
    policy.partial = args.partial;
    alloc::WhatIfOutcome o =
        alloc::run_what_if(args.trace, policy, args.series.value_or(alloc::SeriesWindow{}));
    r = std::move(o.workspace_result);
    if (args.series) series = nlohmann::json{{"replay_series", alloc::series_json(o)}}.dump();
  } catch (const alloc::ConfigError& e) {
    std::fprintf(stderr, "memtrail replay: --conf: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "memtrail replay: %s\n", e.what());
    return 2;
  }
  if (!r.warning.empty()) std::fprintf(stderr, "memtrail replay: warning: %s\n", r.warning.c_str());
  if (!series.empty()) std::printf("%s\n", series.c_str());
  if (args.json)
    std::printf("%s\n", to_json(r, args).dump().c_str());
  else
    print_text(r, args);
  return 0;
}

}  // namespace memtrail::cli
