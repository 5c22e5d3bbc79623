// Input resolution shared by report, check, diff, export and dump.
#include "run_input.hpp"

#include <cstdio>

namespace memtrail::cli {

bool take_selection_option(Args& args, ProcessSelection& selection) {
  std::uint64_t pid = 0;
  if (args.number("--pid", pid)) {
    if (pid > 0xffffffffu) args.fail("--pid " + std::to_string(pid) + " is not a pid");
    selection.pid = static_cast<std::uint32_t>(pid);
    return true;
  }
  return args.value("--program", selection.program);
}

std::string describe_process(const RunProcess& p) {
  std::string out = "pid " + std::to_string(p.pid) + " (" + p.program;
  if (p.sequence > 0) out += ", exec " + std::to_string(p.sequence);
  return out + ")";
}

std::optional<std::vector<RunProcess>> resolve_traces(const std::string& command,
                                                      const std::string& input,
                                                      const ProcessSelection& selection) {
  auto fail = [&](const std::string& message) {
    std::fprintf(stderr, "memtrail %s: %s\n", command.c_str(), message.c_str());
    return std::nullopt;
  };
  if (!is_run_directory(input)) {
    if (selection.any())
      return fail("--pid and --program select processes of a run directory; " + input +
                  " is a single trace");
    RunProcess p;
    p.file = input;
    return std::vector<RunProcess>{p};
  }
  std::string error;
  auto run = read_run(input, &error);
  if (!run) return fail(error);
  if (!selection.any()) return run->processes;
  auto chosen = select_processes(*run, selection.pid, selection.program, &error);
  if (chosen.empty()) return fail(error);
  return chosen;
}

std::optional<std::string> resolve_one_trace(const std::string& command, const std::string& input,
                                             const ProcessSelection& selection) {
  auto traces = resolve_traces(command, input, selection);
  if (!traces) return std::nullopt;
  if (traces->size() == 1) return traces->front().file;
  std::string list;
  for (std::size_t i = 0; i < traces->size() && i < 8; ++i)
    list += (i ? ", " : "") + describe_process((*traces)[i]);
  if (traces->size() > 8) list += ", ...";
  std::fprintf(stderr,
               "memtrail %s: %s holds %zu traces (%s); choose one with --pid or --program\n",
               command.c_str(), input.c_str(), traces->size(), list.c_str());
  return std::nullopt;
}

}  // namespace memtrail::cli
