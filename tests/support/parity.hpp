// Runs a program untraced and under `memtrail run` and compares what the
// program itself can tell (issue 26's acceptance): exit code, stdout, its
// stderr lines, the files it writes in its working directory, and the
// figures it prints through guest_observables.h when GUEST_OBSERVE is set:
// descriptors (view by view, exactly: expect_same_fds), free pthread keys and
// pending dlerror() exactly, mallinfo2() in-use and arena within 1 MiB, RSS
// within 10 % + 16 MiB.
//
//   memtrail::test::ParityCase shape{"raw_fork", RAW_FORK_BIN " _Fork exit"};
//   memtrail::test::expect_parity(shape);
//
// Each run gets a working directory of its own (relative paths in the
// command land there); the trace goes elsewhere. Both runs are under
// timeout(1): a hang fails the test.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <utility>

#include "run_command.hpp"
#include "temp_dir.hpp"

namespace memtrail::test {

struct ParityCase {
  ParityCase(std::string name_, std::string command_, std::string env_ = "")
      : name(std::move(name_)), command(std::move(command_)), env(std::move(env_)) {}
  std::string name;     // names the run's directories
  std::string command;  // shell text: the program and its arguments
  std::string env;      // VAR=value ... for both runs
  int timeout_s = 120;
  // KiB of the tracer's own memory the shape makes it hold, beyond the 16 MiB
  // allowed to every run: its memory is the process's, in VmRSS (the test
  // says which, and why).
  long long tracer_rss_kib = 0;
  std::string run_options;  // `memtrail run`'s own (--no-stacks)
  // Both runs under this soft RLIMIT_NOFILE (`ulimit -Sn`), 0: as the test's.
  int fd_soft_limit = 0;
};

// The acceptance's RSS bound (10 % + 16 MiB) is the product's: an optimized
// tracer. A Debug build's tracer drains its event blocks slower, so more of
// them wait when the program reads its RSS: realloc_race (Shape12) read
// 16.7-18.6 MiB over untraced in Debug against 12.0-15.9 MiB in
// RelWithDebInfo, with the tracer's own mappings the same (11.5-11.8 MiB
// resident at their peak, MEMTRAIL_MEMORY_DEBUG=1, 2026-12-07).
#ifdef NDEBUG
inline constexpr long long kUnoptimizedTracerKiB = 0;
#else
inline constexpr long long kUnoptimizedTracerKiB = 4 * 1024;
#endif

// The run directory and its list are in the writer's table only where the
// kernel can copy them back out of it for a fork child (a PIDFD_THREAD
// pidfd, Linux 6.9); before, they stay in the program's, 2 more.
inline long long run_directory_fds() {
  constexpr unsigned kPidfdThread = O_EXCL;  // linux/pidfd.h
  int fd = static_cast<int>(syscall(SYS_pidfd_open, syscall(SYS_gettid), kPidfdThread));
  if (fd < 0) return 2;
  close(fd);
  return 0;
}

// What one run showed.
struct ProgramView {
  CommandResult result;
  std::string out;                              // stdout less the observe lines
  std::string err;                              // stderr less memtrail's own lines
  std::map<std::string, std::string> observed;  // "fds" -> "5"
  std::map<std::string, std::string> files;     // relative path -> contents
  std::string trace_dir;                        // traced run only
};

constexpr int kParityHung = 124;  // timeout(1)'s exit code

// `memtrail run` writes its own lines to its stderr, each starting with
// "memtrail"; the program's lines are what remains.
inline std::string program_stderr(const std::string& err) {
  std::istringstream in(err);
  std::string kept;
  for (std::string line; std::getline(in, line);)
    if (line.rfind("memtrail", 0) != 0) kept += line + "\n";
  return kept;
}

inline void split_observed(const std::string& out, ProgramView& view) {
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("observe ", 0) != 0) {
      view.out += line + "\n";
      continue;
    }
    auto space = line.find(' ', 8);
    view.observed[line.substr(8, space - 8)] =
        space == std::string::npos ? "" : line.substr(space + 1);
  }
}

inline std::map<std::string, std::string> files_under(const std::string& dir) {
  namespace fs = std::filesystem;
  std::map<std::string, std::string> files;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    std::string rel = fs::relative(it->path(), dir).string();
    files[rel] = it->is_regular_file() ? slurp(it->path().string()) : std::string("<dir>");
  }
  return files;
}

inline ProgramView run_view(const TempDir& dir, const ParityCase& c, bool traced) {
  ProgramView view;
  std::string cwd = dir / ((traced ? "traced-" : "plain-") + c.name);
  run_command("mkdir -p " + shell_quote(cwd));
  std::string tracer;
  if (traced) {
    view.trace_dir = dir / ("t-" + c.name);
    tracer = std::string(MEMTRAIL_BIN) + " run -o " + shell_quote(view.trace_dir) + " " +
             c.run_options + " -- ";
  }
  std::string limit =
      c.fd_soft_limit > 0 ? "ulimit -Sn " + std::to_string(c.fd_soft_limit) + " && " : "";
  view.result =
      run_command("cd " + shell_quote(cwd) + " && " + limit + "GUEST_OBSERVE=1 " + c.env +
                  " timeout -k 5 " + std::to_string(c.timeout_s) + " " + tracer + c.command);
  split_observed(view.result.out, view);
  view.err = traced ? program_stderr(view.result.err) : view.result.err;
  view.files = files_under(cwd);
  return view;
}

inline long long observed_number(const ProgramView& v, const std::string& key) {
  auto it = v.observed.find(key);
  return it == v.observed.end() ? -1 : std::atoll(it->second.c_str());
}

// The descriptor counts, view by view, exactly: the trace file, statm, the
// run directory and its missing-trace list are in the writer thread's own
// table (lent to the program's only across a fork, for the child), and
// libunwind's validation pipe is two numbers that are never descriptors
// (docs/tracing.md, "Descriptors"). Only before Linux 6.9 do the run
// directory's two stay in the program's table (run_directory_fds). The
// lowest free number the programs print themselves (stdout, compared
// exactly).
inline void expect_same_fds(const ProgramView& plain, const ProgramView& traced) {
  const long long more = run_directory_fds();
  for (const char* fds : {"fds", "fds_low", "fds_listed", "fds_fcntl"}) {
    if (plain.observed.count(fds) == 0) continue;
    long long a = observed_number(plain, fds), b = observed_number(traced, fds);
    EXPECT_GE(b, a) << fds << ": untraced " << a << ", traced " << b;
    EXPECT_LE(b, a + more) << fds << ": untraced " << a << ", traced " << b;
  }
}

// The observe lines both runs printed, compared as the acceptance says.
inline void expect_same_observed(const ProgramView& plain, const ProgramView& traced,
                                 const ParityCase& c = ParityCase("", "")) {
  EXPECT_EQ(traced.observed.size(), plain.observed.size());
  for (const char* exact : {"keys", "dlerror"}) {
    if (plain.observed.count(exact) == 0) continue;
    EXPECT_EQ(traced.observed.count(exact) ? traced.observed.at(exact) : "(not printed)",
              plain.observed.at(exact))
        << exact;
  }
  expect_same_fds(plain, traced);
  constexpr long long kMiB = 1 << 20;
  for (const char* heap : {"uordblks", "arena"}) {
    if (plain.observed.count(heap) == 0) continue;
    long long a = observed_number(plain, heap), b = observed_number(traced, heap);
    EXPECT_LE(std::llabs(b - a), kMiB) << heap << ": untraced " << a << ", traced " << b;
  }
  if (plain.observed.count("rss_kib")) {
    long long a = observed_number(plain, "rss_kib"), b = observed_number(traced, "rss_kib");
    EXPECT_LE(std::llabs(b - a), a / 10 + 16 * 1024 + c.tracer_rss_kib + kUnoptimizedTracerKiB)
        << "VmRSS KiB: untraced " << a << ", traced " << b;
  }
}

struct ParityViews {
  ProgramView plain, traced;
};

// Runs `c` both ways; fails the test on any difference the program could
// see. Returns both views, for further checks.
inline ParityViews expect_parity(const TempDir& dir, const ParityCase& c) {
  SCOPED_TRACE(c.name + ": " + c.command);
  ProgramView plain = run_view(dir, c, false);
  ProgramView traced = run_view(dir, c, true);
  EXPECT_NE(plain.result.exit_code, kParityHung) << "untraced run hung";
  EXPECT_NE(traced.result.exit_code, kParityHung) << "traced run hung\n" << traced.result.err;
  EXPECT_EQ(traced.result.exit_code, plain.result.exit_code) << traced.result.err;
  EXPECT_EQ(traced.out, plain.out) << traced.result.err;
  EXPECT_EQ(traced.err, plain.err) << "traced stderr:\n" << traced.result.err;
  EXPECT_EQ(traced.files, plain.files);
  EXPECT_FALSE(plain.observed.empty()) << "the program printed no observe lines:\n" << plain.out;
  expect_same_observed(plain, traced, c);
  return {plain, traced};
}

}  // namespace memtrail::test
