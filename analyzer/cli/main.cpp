#include <cstdio>
#include <cstring>
#include <string_view>

#include "commands.hpp"

namespace {

struct Command {
  const char* name;
  int (*run)(int, char**);
  const char* summary;
};

constexpr Command kCommands[] = {
    {"run", memtrail::cli::cmd_run,
     "run a program under the tracer: memtrail run [-o FILE] -- PROGRAM ARGS"},
    {"attach", memtrail::cli::cmd_attach,
     "trace a running process from now on: memtrail attach PID [-o FILE]"},
    {"report", memtrail::cli::cmd_report,
     "summary, top sites, leaks, pools, scopes (--json for machines)"},
    {"check", memtrail::cli::cmd_check, "CI gate on leaks and peaks: exit 0 pass, 1 fail, 2 error"},
    {"diff", memtrail::cli::cmd_diff, "per-site and per-pool deltas between two traces"},
    {"export", memtrail::cli::cmd_export, "json, chrome, folded, sqlite or pprof"},
    {"replay", memtrail::cli::cmd_replay,
     "drive a trace or replay script through an allocator policy"},
    {"dump", memtrail::cli::cmd_dump, "events and tables as text"},
};

void usage(std::FILE* out) {
  std::fprintf(out, "usage: memtrail COMMAND [OPTIONS] ...\n\ncommands:\n");
  for (const auto& c : kCommands) std::fprintf(out, "  %-8s %s\n", c.name, c.summary);
  std::fprintf(out, "\n'memtrail COMMAND --help' describes a command's options.\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  std::string_view first = argv[1];
  if (first == "--version" || first == "-V") {
    std::printf("memtrail %s\n", MEMTRAIL_VERSION);
    return 0;
  }
  if (first == "--help" || first == "-h" || first == "help") {
    usage(stdout);
    return 0;
  }
  for (const auto& c : kCommands)
    if (first == c.name) return c.run(argc - 1, argv + 1);
  std::fprintf(stderr, "memtrail: unknown command '%s' (try 'memtrail --help')\n", argv[1]);
  return 2;
}
