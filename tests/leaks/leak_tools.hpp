// Runs a leak program of tests/leaks under memtrail, Valgrind memcheck and
// LeakSanitizer, and reads each tool's leak numbers. Shared by the suite and
// by its /tmp litter check, so both exercise exactly the same commands.
#pragma once

#include <dirent.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <ostream>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "run_command.hpp"

namespace memtrail::leaks {

using test::CommandResult;
using test::run_command;
using test::shell_quote;

// Blocks and bytes of one leak class.
struct Amount {
  std::int64_t blocks = 0;
  std::int64_t bytes = 0;
  bool operator==(const Amount&) const = default;
};

// Valgrind memcheck's four classes.
struct ValgrindCounts {
  Amount definite, indirect, possible, reachable;
  bool operator==(const ValgrindCounts&) const = default;
};

inline Amount operator+(const Amount& a, const Amount& b) {
  return {a.blocks + b.blocks, a.bytes + b.bytes};
}
inline ValgrindCounts operator+(const ValgrindCounts& a, const ValgrindCounts& b) {
  return {a.definite + b.definite, a.indirect + b.indirect, a.possible + b.possible,
          a.reachable + b.reachable};
}

// memtrail's classes: Valgrind's four, "possibly lost" included (issue 20).
struct MemtrailCounts {
  Amount direct, indirect, possible, reachable;
  bool operator==(const MemtrailCounts&) const = default;
  static MemtrailCounts from(const ValgrindCounts& v) {
    return {v.definite, v.indirect, v.possible, v.reachable};
  }
};

// LeakSanitizer reports leaked blocks only.
struct LsanCounts {
  Amount direct, indirect;
  bool operator==(const LsanCounts&) const = default;
};

inline std::ostream& operator<<(std::ostream& os, const Amount& a) {
  return os << a.blocks << " blocks / " << a.bytes << " B";
}
inline std::ostream& operator<<(std::ostream& os, const ValgrindCounts& v) {
  return os << "definitely lost " << v.definite << ", indirectly lost " << v.indirect
            << ", possibly lost " << v.possible << ", still reachable " << v.reachable;
}
inline std::ostream& operator<<(std::ostream& os, const MemtrailCounts& m) {
  return os << "direct " << m.direct << ", indirect " << m.indirect << ", possible " << m.possible
            << ", reachable " << m.reachable;
}
inline std::ostream& operator<<(std::ostream& os, const LsanCounts& l) {
  return os << "direct " << l.direct << ", indirect " << l.indirect;
}

// A directory under $TMPDIR (or /tmp), removed with everything in it.
class TempDir {
 public:
  explicit TempDir(const std::string& tag) {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/memtrail-" + tag + "-XXXXXX";
    std::vector<char> buffer(pattern.begin(), pattern.end());
    buffer.push_back('\0');
    if (mkdtemp(buffer.data())) path_ = buffer.data();
  }
  ~TempDir() {
    if (!path_.empty()) run_command("rm -rf " + shell_quote(path_));
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Names in `dir` (not . and ..) that start with `prefix`.
inline std::set<std::string> names_in(const std::string& dir, const std::string& prefix = "") {
  std::set<std::string> names;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      std::string name = e->d_name;
      if (name != "." && name != ".." && name.rfind(prefix, 0) == 0) names.insert(name);
    }
    closedir(d);
  }
  return names;
}

// One traced run: the program's exit code and `memtrail report --json`.
struct MemtrailRun {
  CommandResult run, report;
  nlohmann::json json;
  MemtrailCounts counts;
  std::string error;  // empty when the trace was read and reported
};

inline Amount amount_of(const nlohmann::json& leaks, const std::string& cls) {
  return {leaks.value(cls + "_blocks", std::int64_t{-1}),
          leaks.value(cls + "_bytes", std::int64_t{-1})};
}

// Where a leak program runs: a working directory holding a copy of it (and
// of the plugin it may load) and words put before the command (environment
// assignments). Issue 27: an answer must not move with the path's length or
// the environment's size, which move the heap and the stacks.
struct RunPlace {
  std::string dir;
  std::string env;  // "" or "NAME=value "
  std::string label;
};

// Two directories under `base` whose paths differ in length by more than a
// cache line (`base`/s and `base`/ + 90 characters), each with a copy of
// `program` and libleakplugin.so from `bin_dir`; crossed with an empty extra
// environment and one of 8 KiB: four places. Empty when a copy failed.
inline std::vector<RunPlace> run_places(const std::string& base, const std::string& bin_dir,
                                        const std::string& program) {
  const std::string dirs[2] = {base + "/s", base + "/" + std::string(90, 'd')};
  const std::string pad = "LEAK_SUITE_PAD=" + std::string(8192, 'e') + " ";
  std::vector<RunPlace> places;
  for (const std::string& dir : dirs) {
    CommandResult copy = run_command(
        "mkdir -p " + shell_quote(dir) + " && cp " + shell_quote(bin_dir + "/" + program) + " " +
        shell_quote(bin_dir + "/libleakplugin.so") + " " + shell_quote(dir));
    if (copy.exit_code != 0) return {};
    const std::string size = dir.size() < base.size() + 10 ? "short path" : "long path";
    places.push_back({dir, "", size + ", plain environment"});
    places.push_back({dir, pad, size + ", environment + 8 KiB"});
  }
  return places;
}

// Runs `./program` in `place` under `memtrail run`, its trace written into
// `trace_dir` and removed after the report.
inline MemtrailRun memtrail_run(const std::string& memtrail, const RunPlace& place,
                                const std::string& program, const std::string& trace_dir,
                                bool symbols) {
  MemtrailRun r;
  // A run directory (one trace per process image); the program forks nothing.
  const std::string run_dir = trace_dir + "/run";
  // MEMTRAIL_SCAN_DEBUG: the scan says on stderr where each possibly-lost
  // block's pointer lay, so a run whose class moves tells why.
  r.run =
      run_command("cd " + shell_quote(place.dir) + " && " + place.env + "MEMTRAIL_SCAN_DEBUG=1 " +
                  shell_quote(memtrail) + " run -o " + shell_quote(run_dir) + " -- ./" + program);
  std::set<std::string> traces = names_in(run_dir);
  std::erase_if(traces, [](const std::string& name) { return !name.ends_with(".mtr"); });
  if (traces.size() != 1) {
    r.error = std::to_string(traces.size()) + " traces written; stderr: " + r.run.err;
  } else {
    std::string trace = run_dir;
    r.report = run_command(shell_quote(memtrail) + " report --json --top 0 " +
                           (symbols ? "" : "--no-symbols ") + shell_quote(trace));
    if (r.report.exit_code != 0) {
      r.error = "memtrail report failed: " + r.report.err;
    } else {
      r.json = nlohmann::json::parse(r.report.out, nullptr, false);
      if (r.json.is_discarded() || !r.json.contains("leaks")) {
        r.error = "no leaks in the report";
      } else {
        const auto& leaks = r.json["leaks"];
        r.counts = {amount_of(leaks, "direct"), amount_of(leaks, "indirect"),
                    amount_of(leaks, "possible"), amount_of(leaks, "reachable")};
      }
    }
  }
  run_command("rm -rf " + shell_quote(run_dir));
  return r;
}

// "   definitely lost: 8,320 bytes in 2 blocks" -> {2, 8320}; -1s when absent.
inline Amount valgrind_amount(const std::string& text, const std::string& label) {
  std::smatch m;
  std::regex line(label + R"(: ([0-9,]+) bytes in ([0-9,]+) blocks?)");
  if (!std::regex_search(text, m, line)) return {-1, -1};
  auto number = [](std::string s) {
    std::erase(s, ',');
    return std::stoll(s);
  };
  return {number(m[2].str()), number(m[1].str())};
}

struct ValgrindRun {
  CommandResult run;
  ValgrindCounts counts;
};

inline ValgrindRun valgrind_run(const RunPlace& place, const std::string& program) {
  ValgrindRun r;
  r.run = run_command("cd " + shell_quote(place.dir) + " && " + place.env +
                      "valgrind --vgdb=no --leak-check=full --show-leak-kinds=all "
                      "--errors-for-leak-kinds=none ./" +
                      program);
  if (test::contains(r.run.err, "All heap blocks were freed")) return r;  // all zero
  r.counts = {
      valgrind_amount(r.run.err, "definitely lost"), valgrind_amount(r.run.err, "indirectly lost"),
      valgrind_amount(r.run.err, "possibly lost"), valgrind_amount(r.run.err, "still reachable")};
  return r;
}

// Sums "Direct leak of N byte(s) in M object(s)" lines (or Indirect).
inline Amount lsan_amount(const std::string& text, const std::string& kind) {
  Amount sum;
  std::regex line(kind + R"( leak of ([0-9]+) byte\(s\) in ([0-9]+) object\(s\))");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), line); it != std::sregex_iterator();
       ++it) {
    sum.bytes += std::stoll((*it)[1].str());
    sum.blocks += std::stoll((*it)[2].str());
  }
  return sum;
}

struct LsanRun {
  CommandResult run;
  LsanCounts counts;
};

inline LsanRun lsan_run(const std::string& workdir, const std::string& program) {
  LsanRun r;
  r.run =
      run_command("cd " + shell_quote(workdir) +
                  " && LSAN_OPTIONS=report_objects=1:use_unaligned=0:detect_leaks=1 ./" + program);
  r.counts = {lsan_amount(r.run.err, "Direct"), lsan_amount(r.run.err, "Indirect")};
  return r;
}

// True when `clang -fsanitize=leak` builds and runs a program here.
inline bool lsan_works() {
  static const bool works = [] {
    TempDir dir("leaks-lsan-probe");
    std::string src = dir.path() + "/p.c";
    std::ofstream(src) << "int main(void) { return 0; }\n";
    return run_command("clang -fsanitize=leak -g " + shell_quote(src) + " -o " +
                       shell_quote(dir.path() + "/p") + " && " + shell_quote(dir.path() + "/p"))
               .exit_code == 0;
  }();
  return works;
}

inline bool installed(const std::string& program) {
  return run_command("command -v " + program).exit_code == 0;
}

}  // namespace memtrail::leaks
