// memtrail replay: "what would this program reserve under that policy?"
// Drives a replay script (or the alloc/free sequence of one pool of a
// recorded trace) through CachingPool, BfcPool or a no-cache malloc policy
// over a virtual device, printing the policy's stats at each `stats` line
// and the peaks at the end.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "cmd_replay.hpp"
#include "memtrail/alloc/replay.hpp"
#include "memtrail/alloc/what_if.hpp"
#include "memtrail/size.hpp"
#include "replay_workspace_cmd.hpp"

namespace memtrail::cli {
namespace {

constexpr const char* kUsage =
    "usage: memtrail replay SCRIPT|TRACE [--allocator caching|bfc|malloc] [--conf STR]\n"
    "                       [--capacity SIZE] [--pool NAME] [--keep-addresses] [--partial]\n"
    "                       [--json [--series POINTS [--range T0:T1]]]\n"
    "       memtrail replay TRACE --allocator workspace --iteration-mark NAME [--conf STR]\n"
    "                       [--pool NAME] [--partial] [--json [--series POINTS [--range T0:T1]]]\n"
    "\n"
    "  SCRIPT            one operation per line: 'A = malloc 1000 [stream=1]', 'free A',\n"
    "                    'record_stream A 2', 'synchronize [2]', 'empty_cache', 'stats';\n"
    "                    read as it runs ('-' reads stdin); sizes up to 2^63-1 bytes\n"
    "  TRACE             a .mtr trace: the alloc/free sequence of one pool is replayed\n"
    "  --allocator       policy (default caching: PyTorch's CUDA caching allocator;\n"
    "                    bfc: XLA's BFC arena; malloc: no caching; workspace: ND4J's\n"
    "                    workspace over the allocations of each iteration)\n"
    "  --conf STR        caching: PYTORCH_CUDA_ALLOC_CONF syntax, e.g. max_split_size_mb:128\n"
    "                    bfc: preallocate:False,memory_fraction:0.9,memory_limit:8GiB\n"
    "                    workspace: ND4J's fields, e.g. policyAllocation:STRICT,minSize:1M\n"
    "  --iteration-mark NAME  workspace: iterations are the entries of scope NAME, or\n"
    "                    the spans between consecutive marks NAME\n"
    "  --capacity SIZE   size of the virtual device (default unbounded); OOMs are counted\n"
    "  --pool NAME       pool of the trace to replay (default: the heap, 'malloc')\n"
    "  --keep-addresses  TRACE only: segments take the addresses the pool recorded, so\n"
    "                    equal-size free blocks are ordered as in the recorded run\n"
    "  --partial         TRACE only: replay a cut or damaged trace up to the damage\n"
    "  --json            the final summary as one JSON line\n"
    "  --series POINTS   TRACE with --json: before the summary, one line\n"
    "                    {\"replay_series\": ...}: the replayed reserved and allocated bytes\n"
    "                    in about POINTS buckets over the recorded time, each the most held\n"
    "                    during the bucket (null before the first); memtrail-gui's What-if\n"
    "                    view draws these numbers\n"
    "  --range T0:T1     the series' window in trace nanoseconds (default: the replayed\n"
    "                    events' first to last time)\n"
    "\n"
    "Each 'stats' line prints the policy's stats as one JSON line (PyTorch memory_stats()\n"
    "keys for caching, JAX memory_stats() keys for bfc). Nothing is allocated for real.\n";

int usage_error(const std::string& message) {
  std::fprintf(stderr, "memtrail replay: %s\n", message.c_str());
  return 2;
}

class PrintingSink final : public alloc::ReplaySink {
 public:
  explicit PrintingSink(bool json) : json_(json) {}
  void on_stats(const alloc::ReplayOp&, const std::map<std::string, std::int64_t>& stats) override {
    nlohmann::json j(stats);
    std::printf("%s\n", j.dump().c_str());
  }
  void on_oom(const alloc::ReplayOp& op, const std::string& message) override {
    if (json_) {
      nlohmann::json j = {{"oom", {{"line", op.line}, {"size", op.size}, {"message", message}}}};
      std::printf("%s\n", j.dump().c_str());
    } else {
      std::printf("OOM at line %u (%s): %s\n", op.line, format_size(op.size).c_str(),
                  message.c_str());
    }
  }

 private:
  bool json_;
};

// The input, opened once: a script is read from it as it runs (so it may be
// a pipe, or "-" for stdin); a trace is reopened by TraceReader.
struct Input {
  std::string name;
  std::ifstream file;
  std::istream* in = nullptr;
  bool trace = false;
};

// One line naming the problem, or empty when `input` is ready.
std::string open_input(const std::string& path, Input& input) {
  input.name = path == "-" ? "stdin" : path;
  struct stat st {};
  if (path == "-") {
    std::ios::sync_with_stdio(false);  // a buffered read; before any use of std::cin
    input.in = &std::cin;
    if (fstat(0, &st) != 0) return "stdin: " + std::string(std::strerror(errno));
  } else {
    if (stat(path.c_str(), &st) != 0)
      return path + ": cannot open replay script: " + std::strerror(errno);
    if (S_ISDIR(st.st_mode)) return path + ": is a directory, not a replay script or trace";
    input.file.open(path, std::ios::binary);
    if (!input.file) return path + ": cannot open replay script: " + std::strerror(errno);
    input.in = &input.file;
  }
  const int first = input.in->peek();
  if (first == std::char_traits<char>::eof())
    return input.name + ": empty: not a replay script or trace";
  // A trace starts with its magic "\x89MTRACE\n"; a script is text.
  input.trace = first == 0x89;
  if (input.trace && !S_ISREG(st.st_mode))
    return input.name +
           ": a trace must be a regular file (it is read with seeks; pipes are not supported)";
  return {};
}

// --allocator workspace: checks what only that mode takes, then runs it.
int replay_workspace(const std::string& input, const std::string& allocator,
                     const std::string& mark, const std::string& pool,
                     const alloc::ReplayOptions& options, bool json, bool partial,
                     const std::optional<alloc::SeriesWindow>& series) {
  if (allocator != "workspace")
    return usage_error("--iteration-mark is for --allocator workspace, not " + allocator);
  if (mark.empty())
    return usage_error("--allocator workspace needs --iteration-mark NAME (a scope or mark)");
  if (options.capacity) return usage_error("--capacity is not used by --allocator workspace");
  if (options.keep_addresses)
    return usage_error("--keep-addresses is not used by --allocator workspace");
  Input in;
  if (std::string error = open_input(input, in); !error.empty()) return usage_error(error);
  if (!in.trace)
    return usage_error("--allocator workspace needs a trace (.mtr); '" + input +
                       "' is a replay script");
  return run_workspace_replay({input, pool, mark, options.conf, json, partial, series});
}

// "T0:T1" in nanoseconds, T0 < T1; throws std::invalid_argument.
void parse_range(const std::string& text, alloc::SeriesWindow& window) {
  const auto colon = text.find(':');
  std::size_t end0 = 0, end1 = 0;
  try {
    if (colon == std::string::npos) throw std::invalid_argument("");
    window.t0 = std::stoull(text.substr(0, colon), &end0);
    window.t1 = std::stoull(text.substr(colon + 1), &end1);
  } catch (const std::logic_error&) {
    end0 = 0;
  }
  if (end0 != colon || end1 != text.size() - colon - 1 || end0 == 0 || window.t1 <= window.t0)
    throw std::invalid_argument("--range needs T0:T1 in nanoseconds with T0 < T1, not '" + text +
                                "'");
}

std::size_t parse_points(const std::string& text) {
  std::size_t end = 0;
  unsigned long long n = 0;
  try {
    n = std::stoull(text, &end);
  } catch (const std::logic_error&) {
    end = 0;
  }
  if (end == 0 || end != text.size() || n == 0 || n > 1'000'000 || text[0] == '-')
    throw std::invalid_argument("--series needs POINTS from 1 to 1000000, not '" + text + "'");
  return static_cast<std::size_t>(n);
}

}  // namespace

int cmd_replay(int argc, char** argv) {
  std::string input, allocator = "caching", pool = "malloc", iteration_mark;
  alloc::ReplayOptions options;
  bool json = false, partial = false, ranged = false;
  std::optional<alloc::SeriesWindow> series;
  alloc::SeriesWindow window;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const char* flag) -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(std::string(flag) + " needs a value");
      return argv[++i];
    };
    try {
      if (a == "--help" || a == "-h") {
        std::fputs(kUsage, stdout);
        return 0;
      } else if (a == "--allocator") {
        allocator = value("--allocator");
      } else if (a == "--conf") {
        options.conf = value("--conf");
      } else if (a == "--capacity") {
        std::string text = value("--capacity"), error;
        auto size = parse_size(text, &error);
        if (!size) return usage_error("--capacity " + error);
        if (*size == 0) return usage_error("--capacity must be more than 0 bytes");
        options.capacity = *size;
      } else if (a == "--iteration-mark") {
        iteration_mark = value("--iteration-mark");
        if (iteration_mark.empty()) return usage_error("--iteration-mark needs a non-empty NAME");
      } else if (a == "--pool") {
        pool = value("--pool");
      } else if (a == "--series") {
        window.points = parse_points(value("--series"));
        series = window;
      } else if (a == "--range") {
        parse_range(value("--range"), window);
        ranged = true;
      } else if (a == "--json") {
        json = true;
      } else if (a == "--partial") {
        partial = true;
      } else if (a == "--keep-addresses") {
        options.keep_addresses = true;
      } else if (a.size() > 1 && a[0] == '-') {
        return usage_error("unknown option '" + a + "' (see memtrail replay --help)");
      } else if (input.empty()) {
        input = a;
      } else {
        return usage_error("one input only; got '" + input + "' and '" + a + "'");
      }
    } catch (const std::invalid_argument& e) {
      return usage_error(e.what());
    }
  }
  // No input named and a script piped in (`echo ... | memtrail replay`): stdin.
  if (input.empty() && !isatty(STDIN_FILENO)) input = "-";
  if (input.empty()) return usage_error("missing SCRIPT or TRACE (see memtrail replay --help)");
  if (ranged && !series) return usage_error("--range is the window of --series POINTS");
  if (series && !json) return usage_error("--series needs --json");
  if (series) series = window;  // --range may come after --series
  if (allocator == "caching")
    options.allocator = alloc::ReplayAllocator::caching;
  else if (allocator == "bfc")
    options.allocator = alloc::ReplayAllocator::bfc;
  else if (allocator == "malloc")
    options.allocator = alloc::ReplayAllocator::malloc;
  else if (allocator != "workspace")
    return usage_error("unknown allocator '" + allocator + "' (caching, bfc, malloc or workspace)");
  if (allocator == "workspace" || !iteration_mark.empty())
    return replay_workspace(input, allocator, iteration_mark, pool, options, json, partial, series);

  Input in;
  if (std::string error = open_input(input, in); !error.empty()) return usage_error(error);
  if (options.keep_addresses && !in.trace)
    return usage_error("--keep-addresses needs a trace (.mtr); '" + input +
                       "' is a replay script, whose segments have no recorded addresses");
  if (series && !in.trace)
    return usage_error("--series needs a trace (.mtr); '" + input + "' is a replay script");
  PrintingSink sink(json);
  alloc::ReplayResult r;
  try {
    if (in.trace) {
      // The GUI's What-if view makes this same call (alloc/what_if.hpp).
      const alloc::WhatIfPolicy policy{allocator, pool,    options.conf,          options.capacity,
                                       {},        partial, options.keep_addresses};
      alloc::WhatIfOutcome o = alloc::run_what_if(input, policy, series.value_or(window), &sink);
      if (!o.warning.empty())
        std::fprintf(stderr, "memtrail replay: warning: %s\n", o.warning.c_str());
      if (series)
        std::printf("%s\n",
                    nlohmann::json{{"replay_series", alloc::series_json(o)}}.dump().c_str());
      r = o.replay;
    } else {
      alloc::ReplayScriptReader script(*in.in, in.name);
      r = alloc::run_replay(script, options, &sink);
      if (r.ops == 0)
        return usage_error(in.name + ": no operations in " + std::to_string(script.lines()) +
                           " lines: not a replay script or trace");
    }
  } catch (const alloc::ConfigError& e) {
    return usage_error(std::string("--conf: ") + e.what());
  } catch (const std::exception& e) {
    return usage_error(e.what());
  }
  if (json) {
    nlohmann::json j = {{"replay_summary",
                         {{"allocator", allocator},
                          {"ops", r.ops},
                          {"mallocs", r.mallocs},
                          {"frees", r.frees},
                          {"ooms", r.ooms},
                          {"peak_reserved_bytes", r.peak_reserved},
                          {"peak_allocated_bytes", r.peak_allocated},
                          {"peak_fragmentation_bytes", r.peak_fragmentation},
                          {"final_reserved_bytes", r.final_reserved},
                          {"final_allocated_bytes", r.final_allocated}}}};
    if (options.keep_addresses) {
      j["replay_summary"]["addresses_kept"] = r.addresses_kept;
      j["replay_summary"]["addresses_skipped"] = r.addresses_skipped;
    }
    std::printf("%s\n", j.dump().c_str());
  } else {
    std::printf("allocator:          %s (%llu ops)\n", allocator.c_str(),
                static_cast<unsigned long long>(r.ops));
    std::printf("peak reserved:      %s (%llu bytes)\n", format_size(r.peak_reserved).c_str(),
                static_cast<unsigned long long>(r.peak_reserved));
    std::printf("peak allocated:     %s (%llu bytes)\n", format_size(r.peak_allocated).c_str(),
                static_cast<unsigned long long>(r.peak_allocated));
    std::printf("peak fragmentation: %s (%llu bytes, reserved - allocated)\n",
                format_size(r.peak_fragmentation).c_str(),
                static_cast<unsigned long long>(r.peak_fragmentation));
    std::printf("OOMs:               %llu\n", static_cast<unsigned long long>(r.ooms));
    if (options.keep_addresses)
      std::printf("recorded addresses: %llu kept, %llu skipped (they overlapped a live segment)\n",
                  static_cast<unsigned long long>(r.addresses_kept),
                  static_cast<unsigned long long>(r.addresses_skipped));
  }
  return 0;
}

}  // namespace memtrail::cli
