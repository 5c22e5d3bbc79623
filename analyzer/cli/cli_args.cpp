#include "cli_args.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>

namespace memtrail::cli {

Args::Args(std::string command, int argc, char** argv) : command_(std::move(command)) {
  for (int i = 1; i < argc; ++i) args_.emplace_back(argv[i]);
}

bool Args::is_option() const {
  if (pos_ >= args_.size()) return false;
  const std::string& a = args_[pos_];
  return a.size() > 1 && a[0] == '-';
}

std::string Args::take() {
  return pos_ < args_.size() ? args_[pos_++] : std::string();
}

bool Args::flag(std::string_view name) {
  if (done() || args_[pos_] != name) return false;
  ++pos_;
  return true;
}

bool Args::value(std::string_view name, std::string& out) {
  if (done()) return false;
  const std::string& a = args_[pos_];
  if (a == name) {
    if (pos_ + 1 >= args_.size()) {
      fail(std::string(name) + " needs a value");
      ++pos_;
      return true;
    }
    out = args_[pos_ + 1];
    pos_ += 2;
    return true;
  }
  if (a.size() > name.size() && a.compare(0, name.size(), name) == 0 && a[name.size()] == '=') {
    out = a.substr(name.size() + 1);
    ++pos_;
    return true;
  }
  return false;
}

bool Args::number(std::string_view name, std::uint64_t& out) {
  std::string text;
  if (!value(name, text)) return false;
  if (failed()) return true;
  char* end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(text.c_str(), &end, 10);
  if (text.empty() || text[0] == '-' || *end != '\0' || errno == ERANGE)
    fail(std::string(name) + ": '" + text + "' is not a non-negative integer");
  else
    out = v;
  return true;
}

bool take_num_callers(Args& args, std::uint64_t& out) {
  std::uint64_t n = 0;
  if (!args.number("--num-callers", n)) return false;
  if (args.failed()) return true;
  if (n < 1 || n > 500)
    args.fail("--num-callers " + std::to_string(n) + ": expected 1 to 500 frames");
  else
    out = n;
  return true;
}

int Args::unknown() {
  fail("unknown option '" + args_[pos_] + "'");
  return usage_error();
}

void Args::fail(std::string message) {
  if (error_.empty()) error_ = std::move(message);
}

int Args::usage_error() const {
  std::fprintf(stderr, "memtrail %s: %s (try 'memtrail %s --help')\n", command_.c_str(),
               error_.c_str(), command_.c_str());
  return 2;
}

const char* const kAnalysisOptionsHelp =
    "  --from TIME         start of the time range (ns, or with ns/us/ms/s suffix)\n"
    "  --to TIME           end of the time range (inclusive)\n"
    "  --from-mark NAME    range starts at the first mark NAME\n"
    "  --to-mark NAME      range ends at the first mark NAME after its start\n"
    "  --iteration-mark NAME  marks NAME delimit loop iterations: reported as a scope\n"
    "                      (growth per iteration and the sites that grow)\n"
    "  --pool NAME         analyze only this pool (repeatable)\n"
    "  --no-symbols        show module+offset instead of resolving symbols\n"
    "  --no-symbol-cache   neither read nor write FILE.symbols (resolved frames)\n"
    "  --partial           analyze a cut or damaged trace up to the damage\n"
    "  --group-by-address  one site per recorded stack (return addresses), not\n"
    "                      per symbolized stack (function, file, line, inlining)\n";

bool take_analysis_option(Args& args, AnalysisOptions& o) {
  std::string v;
  auto time = [&](std::uint64_t& out, const char* name) {
    std::string why;
    if (args.failed()) return;
    if (auto ns = parse_duration_ns(v, &why))
      out = *ns;
    else
      args.fail(std::string(name) + " " + why);
  };
  if (args.value("--from", v)) {
    time(o.from_ns, "--from");
    return true;
  }
  if (args.value("--to", v)) {
    time(o.to_ns, "--to");
    return true;
  }
  if (args.value("--from-mark", v)) {
    o.from_mark = v;
    return true;
  }
  if (args.value("--to-mark", v)) {
    o.to_mark = v;
    return true;
  }
  if (args.value("--iteration-mark", v)) {
    if (v.empty()) args.fail("--iteration-mark needs a non-empty mark text");
    o.iteration_mark = v;
    return true;
  }
  if (args.value("--pool", v)) {
    o.pools.push_back(v);
    return true;
  }
  if (args.flag("--no-symbols")) {
    o.symbolize = false;
    return true;
  }
  if (args.flag("--no-symbol-cache")) {
    o.symbol_cache = false;
    return true;
  }
  if (args.flag("--group-by-address")) {
    o.group_by_address = true;
    return true;
  }
  if (args.flag("--partial")) {
    o.allow_partial = true;
    return true;
  }
  return false;
}

bool check_analysis_options(Args& args, const AnalysisOptions& o) {
  if (o.to_ns != kTimeMax && o.from_ns > o.to_ns)
    args.fail("--from (" + std::to_string(o.from_ns) + " ns) is after --to (" +
              std::to_string(o.to_ns) + " ns)");
  if (!o.from_mark.empty() && o.from_ns != 0)
    args.fail("--from and --from-mark exclude each other");
  if (!o.to_mark.empty() && o.to_ns != kTimeMax) args.fail("--to and --to-mark exclude each other");
  return !args.failed();
}

std::optional<int> parse_trace_command(Args& args, const char* usage, AnalysisOptions& options,
                                       std::vector<std::string>& files,
                                       const std::function<bool(Args&)>& own) {
  while (!args.done()) {
    if (args.flag("--help") || args.flag("-h")) {
      std::printf("%s%s", usage, kAnalysisOptionsHelp);
      return 0;
    }
    if (own(args) || take_analysis_option(args, options)) continue;
    if (args.is_option()) return args.unknown();
    files.push_back(args.take());
  }
  return std::nullopt;
}

void expect_one_trace(Args& args, const std::vector<std::string>& files) {
  if (!args.failed() && files.size() != 1)
    args.fail(files.empty() ? "missing trace FILE"
                            : "expected one trace FILE, got " + std::to_string(files.size()));
}

namespace {

// One line naming the pools of `names` that the trace lacks, and the pools it
// has; empty when all are there. A misspelt pool would otherwise give an
// empty report, and pass every limit with 0 bytes.
std::string unknown_pools(const Analysis& a) {
  for (const std::string& name : a.options.pools) {
    if (std::find(a.pool_names.begin(), a.pool_names.end(), name) != a.pool_names.end()) continue;
    std::string known;
    for (const std::string& p : a.pool_names) known += (known.empty() ? "'" : ", '") + p + "'";
    return a.path + ": pool '" + name +
           "' is not in the trace (pools: " + (known.empty() ? "none" : known) + ")";
  }
  return {};
}

// Why the analysis saw no event, or empty when it saw some.
std::string no_events(const Analysis& a) {
  if (a.summary.events > 0) return {};
  if (a.read.events == 0) return a.path + ": no events were read from the trace";
  // The range as asked (the resolved one stays at 0 when nothing is in it).
  const std::uint64_t from = std::max(a.range_from_ns, a.options.from_ns);
  const std::uint64_t to = std::min(a.range_to_ns, a.options.to_ns);
  std::string range = std::to_string(from) + " ns .. " +
                      (to == kTimeMax ? std::string("end") : std::to_string(to) + " ns");
  return a.path + ": the range " + range + " selects none of the " + std::to_string(a.read.events) +
         " events read";
}

}  // namespace

int report_input_status(const std::string& command, const Analysis& a, bool needs_events) {
  const char* cmd = command.c_str();
  if (!a.error.empty()) {
    std::string hint;
    if (a.read.dropped_bytes > 0 || (!a.read.ok && a.read.chunks > 0))
      hint = " (--partial analyzes what was read)";
    std::fprintf(stderr, "memtrail %s: %s%s\n", cmd, a.error.c_str(), hint.c_str());
    return 2;
  }
  if (!a.warning.empty())
    std::fprintf(stderr, "memtrail %s: warning: %s\n", cmd, a.warning.c_str());
  if (std::string why = unknown_pools(a); !why.empty()) {
    std::fprintf(stderr, "memtrail %s: %s\n", cmd, why.c_str());
    return 2;
  }
  if (std::string why = no_events(a); !why.empty()) {
    if (needs_events) {
      std::fprintf(stderr, "memtrail %s: %s; a check needs events to pass\n", cmd, why.c_str());
      return 2;
    }
    std::fprintf(stderr, "memtrail %s: note: %s; the report is empty\n", cmd, why.c_str());
  }
  return 0;
}

int finish_stdout_report(const std::string& command, int rc) {
  std::cout.flush();
  if (!std::cout) {
    std::fprintf(stderr, "memtrail %s: cannot write the report to stdout\n", command.c_str());
    return 2;
  }
  return rc;
}

}  // namespace memtrail::cli
