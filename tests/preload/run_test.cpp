// End-to-end tests of `memtrail run`: real programs under the real preload
// library, traces read back with the real TraceReader.
#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "memtrail/trace_file.hpp"
#include "run_dir.hpp"

using memtrail::test::only_trace;
using memtrail::test::run_traces;

extern char** environ;

namespace {

struct Output {
  int exit_code = -1;
  std::string out;
  std::string err;
};

std::string read_fd(int fd) {
  std::string text;
  char buffer[4096];
  ssize_t n;
  while ((n = read(fd, buffer, sizeof buffer)) > 0) text.append(buffer, static_cast<size_t>(n));
  return text;
}

// Runs argv (PATH search) in `dir` with stdin from /dev/null; collects stdout
// and stderr (stderr through a file so a full pipe cannot deadlock us).
Output run(const std::vector<std::string>& args, const std::string& dir = "") {
  int out_pipe[2];
  EXPECT_EQ(pipe(out_pipe), 0);
  char err_path[] = "/tmp/memtrail-run-test-err-XXXXXX";
  int err_fd = mkstemp(err_path);
  unlink(err_path);
  pid_t pid = fork();
  if (pid == 0) {
    if (!dir.empty() && chdir(dir.c_str()) != 0) _exit(126);
    int null_fd = open("/dev/null", O_RDONLY);
    dup2(null_fd, 0);
    dup2(out_pipe[1], 1);
    dup2(err_fd, 2);
    close(out_pipe[0]);
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    _exit(127);
  }
  close(out_pipe[1]);
  Output result;
  result.out = read_fd(out_pipe[0]);
  close(out_pipe[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  lseek(err_fd, 0, SEEK_SET);
  result.err = read_fd(err_fd);
  close(err_fd);
  return result;
}

bool installed(const std::string& program) {
  return run({"sh", "-c", "command -v " + program + " >/dev/null"}).exit_code == 0;
}

class TempDir {
 public:
  TempDir() {
    // the pid tells tests/tmp_litter whose directory this is
    std::string path = "/tmp/memtrail-run-test-" + std::to_string(getpid()) + "-XXXXXX";
    path_ = mkdtemp(path.data());
  }
  ~TempDir() { run({"rm", "-rf", path_}); }
  const std::string& path() const { return path_; }
  std::vector<std::string> files() const { return list(path_); }
  // The names in `dir`, without hidden ones.
  static std::vector<std::string> list(const std::string& dir) {
    std::vector<std::string> names;
    if (DIR* d = opendir(dir.c_str())) {
      while (dirent* e = readdir(d))
        if (e->d_name[0] != '.') names.push_back(e->d_name);
      closedir(d);
    }
    return names;
  }

 private:
  std::string path_;
};

// What a trace says, computed straight from its events.
struct LeakCount {
  std::uint64_t blocks = 0;
  std::uint64_t bytes = 0;
};
struct TraceSummary : memtrail::TraceVisitor {
  memtrail::ReadResult result;
  memtrail::TraceHeader header;
  std::uint64_t allocs = 0, frees = 0, segments = 0, samples = 0, temporaries = 0;
  std::map<memtrail::LeakClass, LeakCount> leaks;
  std::multiset<std::uint64_t> reachable_sizes, leaked_sizes, runtime_sizes, possible_sizes;
  std::map<std::uint32_t, std::uint64_t> last_alloc_by_thread;  // temporaries (heaptrack's rule)
  std::set<std::uint32_t> threads_with_events;
  std::set<std::string> modules;
  std::map<std::uint64_t, std::uint64_t> alloc_sizes;  // size -> allocations of that size
  // size -> blocks carried in from another trace (AllocFn::inherited)
  std::map<std::uint64_t, std::uint64_t> inherited_sizes;
  std::set<std::pair<std::uint32_t, std::uint64_t>> live;  // (pool, address)
  std::uint64_t unmatched_frees = 0;  // frees of blocks with no alloc before them
  // The signal of each MarkDetail::signal.
  std::vector<std::uint64_t> signal_marks;
  // Events a MarkDetail::lost says were not written, by LostReason.
  std::map<std::uint64_t, std::uint64_t> lost_by_reason;

  void on_header(const memtrail::TraceHeader& h) override { header = h; }
  void on_module(const memtrail::ModuleInfo& m) override { modules.insert(m.path); }
  void on_event(const memtrail::Event& e) override {
    using K = memtrail::EventKind;
    if (e.kind == K::alloc && e.detail == static_cast<std::uint8_t>(memtrail::AllocFn::inherited)) {
      ++inherited_sizes[e.size];
      live.emplace(e.pool, e.address);
    } else if (e.kind == K::alloc) {
      ++allocs;
      ++alloc_sizes[e.size];
      live.emplace(e.pool, e.address);
      last_alloc_by_thread[e.thread] = e.address;
      threads_with_events.insert(e.thread);
    } else if (e.kind == K::free) {
      ++frees;
      if (live.erase({e.pool, e.address}) == 0) ++unmatched_frees;
      auto it = last_alloc_by_thread.find(e.thread);
      if (it != last_alloc_by_thread.end() && it->second == e.address) ++temporaries;
      if (it != last_alloc_by_thread.end()) it->second = 0;
    } else if (e.kind == K::segment_reserve) {
      ++segments;
    } else if (e.kind == K::sample) {
      ++samples;
    } else if (e.kind == K::mark &&
               e.detail == static_cast<std::uint8_t>(memtrail::MarkDetail::signal)) {
      signal_marks.push_back(e.size);
    } else if (e.kind == K::mark &&
               e.detail == static_cast<std::uint8_t>(memtrail::MarkDetail::lost)) {
      lost_by_reason[e.requested] += e.size;
    } else if (e.kind == K::reachability) {
      auto cls = static_cast<memtrail::LeakClass>(e.detail);
      leaks[cls].blocks++;
      leaks[cls].bytes += e.size;
      (cls == memtrail::LeakClass::reachable  ? reachable_sizes
       : cls == memtrail::LeakClass::runtime  ? runtime_sizes
       : cls == memtrail::LeakClass::possible ? possible_sizes
                                              : leaked_sizes)
          .insert(e.size);
    }
  }
};

TraceSummary read_trace(const std::string& path) {
  TraceSummary summary;
  memtrail::TraceReader reader(path);
  summary.result = reader.read(summary);
  return summary;
}

const std::string kMemtrail = MEMTRAIL_BIN;

// ---- command line ----------------------------------------------------------

TEST(MemtrailRun, ExitCodeOfTheProgramPropagates) {
  TempDir dir;
  EXPECT_EQ(run({kMemtrail, "run", "--", "sh", "-c", "exit 3"}, dir.path()).exit_code, 3);
  EXPECT_EQ(run({kMemtrail, "run", "--", "sh", "-c", "exit 0"}, dir.path()).exit_code, 0);
  // Death by signal: 128 + signal number, like a shell.
  EXPECT_EQ(run({kMemtrail, "run", "sh", "-c", "kill -TERM $$"}, dir.path()).exit_code,
            128 + SIGTERM);
}

TEST(MemtrailRun, BadUsageExitsTwoWithOneLine) {
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"run"},
                                             {"run", "--bogus", "true"},
                                             {"run", "--depth", "0", "true"},
                                             {"run", "--depth", "x", "true"},
                                             {"run", "--sample-ms", "-5", "true"},
                                             {"run", "-o"},
                                             {"run", "--", "/nonexistent/program"},
                                             {"run", "no-such-program-memtrail"}}) {
    std::vector<std::string> argv{kMemtrail};
    argv.insert(argv.end(), args.begin(), args.end());
    Output o = run(argv);
    EXPECT_EQ(o.exit_code, 2) << args.back();
    EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;
    EXPECT_EQ(o.err.rfind("memtrail run: ", 0), 0u) << o.err;
  }
}

// -o names the run directory (%p = memtrail run's pid); the process's trace
// inside is <pid>.<exec>.<program>.mtr.
TEST(MemtrailRun, SaysWhereTheRunWentWithPidExpanded) {
  TempDir dir;
  Output o = run({kMemtrail, "run", "-o", "t.%p", "--", "true"}, dir.path());
  ASSERT_EQ(o.exit_code, 0) << o.err;
  auto files = dir.files();
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(o.err, "memtrail: trace written to " + files[0] + " (1 trace)\n");
  EXPECT_NE(files[0].find_first_of("0123456789"), std::string::npos);
  std::string trace = only_trace(dir.path() + "/" + files[0]);
  TraceSummary t = read_trace(trace);
  EXPECT_TRUE(t.result.ok) << t.result.error;
  EXPECT_TRUE(t.result.complete);
  EXPECT_EQ(trace,
            dir.path() + "/" + files[0] + "/" + std::to_string(t.header.pid) + ".0.true.mtr");
}

TEST(MemtrailRun, DefaultOutputNameIsProgramAndPid) {
  TempDir dir;
  Output o = run({kMemtrail, "run", "true"}, dir.path());
  ASSERT_EQ(o.exit_code, 0) << o.err;
  auto files = dir.files();
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].rfind("memtrail.true.", 0), 0u) << files[0];
}

// ---- exact leak classification -----------------------------------------------

TEST(MemtrailRun, LeaksSampleIsClassifiedExactly) {
  TempDir dir;
  Output o = run({kMemtrail, "run", "-o", "leaks.mtr", "--", LEAKS_BIN}, dir.path());
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.out, "leaks: done\n");
  TraceSummary t = read_trace(only_trace(dir.path() + "/leaks.mtr"));
  ASSERT_TRUE(t.result.ok) << t.result.error;
  ASSERT_TRUE(t.result.complete);
  using memtrail::LeakClass;
  // samples/leaks/README.md: 13 direct blocks (8,797 B), 9 indirect (288 B).
  EXPECT_EQ(t.leaks[LeakClass::direct].blocks, 13u);
  EXPECT_EQ(t.leaks[LeakClass::direct].bytes, 8797u);
  EXPECT_EQ(t.leaks[LeakClass::indirect].blocks, 9u);
  EXPECT_EQ(t.leaks[LeakClass::indirect].bytes, 288u);
  EXPECT_EQ(t.leaks[LeakClass::unknown].blocks, 0u);
  EXPECT_EQ(t.leaked_sizes,
            (std::multiset<std::uint64_t>{100, 200, 300, 640, 5000, 256, 200, 21,  32,  32,  32,
                                          32,  32,  32,  32,  32,   32,  32,  512, 512, 512, 512}));
  // Reachable through globals, static TLS and a parked thread's stack;
  // stdio's FILE and buffers and glibc's TLS blocks too. The block held only
  // by an interior pointer is possibly lost, as Valgrind says.
  EXPECT_EQ(t.possible_sizes, std::multiset<std::uint64_t>{100});
  EXPECT_EQ(t.reachable_sizes.count(777), 1u);
  EXPECT_EQ(t.reachable_sizes.count(96), 1u);
  EXPECT_EQ(t.reachable_sizes.count(100), 0u);
  EXPECT_EQ(t.reachable_sizes.count(64), 4u);
  EXPECT_EQ(t.reachable_sizes.count(32), 1u);
  EXPECT_EQ(t.reachable_sizes.count(472), 1u);  // the FILE of /dev/null
  // /dev/null's buffer; stdout's is libc's own, counted with the runtime's
  // blocks as Valgrind (which frees it in __libc_freeres) leaves it out.
  EXPECT_EQ(t.reachable_sizes.count(4096), 1u);
  EXPECT_EQ(t.temporaries, 27u);  // 25 malloc/free pairs + 2 realloc moves
}

// The same numbers through the user's path: `memtrail report --json`.
TEST(MemtrailRun, LeaksSampleReportJson) {
  TempDir dir;
  Output o = run({kMemtrail, "run", "-o", "leaks.mtr", "--", LEAKS_BIN}, dir.path());
  ASSERT_EQ(o.exit_code, 0) << o.err;
  Output report = run({kMemtrail, "report", "--json", dir.path() + "/leaks.mtr"});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  auto json = nlohmann::json::parse(report.out);
  const auto& leaks = json.at("leaks");
  EXPECT_EQ(leaks.at("direct_blocks"), 13);
  EXPECT_EQ(leaks.at("direct_bytes"), 8797);
  EXPECT_EQ(leaks.at("indirect_blocks"), 9);
  EXPECT_EQ(leaks.at("indirect_bytes"), 288);
  // Own reachable blocks (7) + the /dev/null FILE and buffer, none of them
  // counted as leaks (stdout's buffer is the runtime's); the 100 B block
  // held by an interior pointer is possibly lost, not leaked either.
  EXPECT_GE(leaks.at("reachable_blocks").get<int>(), 9);
  EXPECT_EQ(leaks.at("possible_blocks"), 1);
  EXPECT_EQ(leaks.at("possible_bytes"), 100);
  EXPECT_EQ(json.at("summary").at("leaked_blocks"), 22);
  EXPECT_EQ(json.at("summary").at("leaked_bytes"), 9085);
  EXPECT_EQ(json.at("summary").at("temporary_allocations"), 27);
  // Sites start at the program's frame, not in the tracer or libc: the
  // realloc chain's last block is charged to the function that made it.
  bool realloc_site = false;
  for (const auto& site : leaks.at("sites")) {
    if (site.at("bytes") == 5000 && !site.at("stack").empty())
      realloc_site =
          site.at("stack")[0].value("function", "").find("leak_realloc_chain") != std::string::npos;
  }
  EXPECT_TRUE(realloc_site);
}

TEST(MemtrailRun, DlopenedLibraryLeakIsFound) {
  TempDir dir;
  Output o = run({kMemtrail, "run", "-o", "d.mtr", "--", DLOPEN_BIN}, dir.path());
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.out, "dlopen_host: plugin returned 41\n");
  TraceSummary t = read_trace(only_trace(dir.path() + "/d.mtr"));
  ASSERT_TRUE(t.result.ok) << t.result.error;
  EXPECT_EQ(t.leaks[memtrail::LeakClass::direct].blocks, 1u);
  EXPECT_EQ(t.leaks[memtrail::LeakClass::direct].bytes, 4242u);
  EXPECT_EQ(t.leaks[memtrail::LeakClass::indirect].blocks, 0u);
  bool plugin_in_module_table = false;
  for (const auto& m : t.modules)
    plugin_in_module_table |= m.find("libdlopen_plugin.so") != std::string::npos;
  EXPECT_TRUE(plugin_in_module_table);
}

// Other threads' stacks are scanned from their stack pointers up: a stale
// address below a parked thread's stack pointer (left by the joined thread
// whose stack glibc recycled) does not hide a leak.
TEST(MemtrailRun, StaleAddressInARecycledThreadStackDoesNotHideALeak) {
  for (int run_index = 0; run_index < 3; ++run_index) {
    TempDir dir;
    Output o = run({kMemtrail, "run", "-o", "r.mtr", "--", RECYCLED_STACK_BIN}, dir.path());
    ASSERT_EQ(o.exit_code, 0) << o.err;
    TraceSummary t = read_trace(only_trace(dir.path() + "/r.mtr"));
    ASSERT_TRUE(t.result.ok) << t.result.error;
    EXPECT_EQ(t.leaks[memtrail::LeakClass::direct].blocks, 1u) << "run " << run_index;
    EXPECT_EQ(t.leaks[memtrail::LeakClass::direct].bytes, 4321u) << "run " << run_index;
    EXPECT_EQ(t.reachable_sizes.count(16), 1u) << "run " << run_index;
  }
}

TEST(MemtrailRun, HundredsOfThreadsFreeingAcrossThreads) {
  TempDir dir;
  Output plain = run({THREADS_BIN, "300", "200"});
  Output o = run({kMemtrail, "run", "-o", "t.mtr", "--", THREADS_BIN, "300", "200"}, dir.path());
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.out, plain.out);
  TraceSummary t = read_trace(only_trace(dir.path() + "/t.mtr"));
  ASSERT_TRUE(t.result.ok) << t.result.error;
  EXPECT_GE(t.allocs, 300u * 200u);
  EXPECT_GE(t.frees, 300u * 200u);
  EXPECT_GE(t.threads_with_events.size(), 300u);
  EXPECT_EQ(t.leaks[memtrail::LeakClass::direct].blocks, 0u);
  EXPECT_EQ(t.leaks[memtrail::LeakClass::indirect].blocks, 0u);
}

TEST(MemtrailRun, ChurnSampleCountsAndLeaks) {
  TempDir dir;
  Output o = run({kMemtrail, "run", "-o", "c.mtr", "--", CHURN_BIN, "20000"}, dir.path());
  ASSERT_EQ(o.exit_code, 0) << o.err;
  TraceSummary t = read_trace(only_trace(dir.path() + "/c.mtr"));
  ASSERT_TRUE(t.result.ok) << t.result.error;
  EXPECT_EQ(t.leaks[memtrail::LeakClass::direct].blocks, 357u);
  EXPECT_EQ(t.leaks[memtrail::LeakClass::direct].bytes, 570752u);
  // Every second pair is freed at once: 10,000 temporaries.
  EXPECT_EQ(t.temporaries, 10000u);
  // Two threads: every free comes after its alloc in the file, and the
  // tracer's own start-up frees nothing it did not record.
  EXPECT_EQ(t.unmatched_frees, 0u);
  EXPECT_GT(t.samples, 0u);
}

// ---- crash safety ------------------------------------------------------------------

TEST(MemtrailRun, SigkillLeavesAReadableTrace) {
  TempDir dir;
  pid_t runner = fork();
  if (runner == 0) {
    if (chdir(dir.path().c_str()) != 0) _exit(126);
    int null_fd = open("/dev/null", O_WRONLY);
    dup2(null_fd, 1);
    dup2(null_fd, 2);
    execl(kMemtrail.c_str(), kMemtrail.c_str(), "run", "-o", "k", "--", CHURN_BIN, "2000000000",
          nullptr);
    _exit(127);
  }
  // Wait (no fixed sleep) until the traced program has flushed whole chunks
  // holding allocations. A size alone is not enough: stat() can see a chunk
  // half written, and a kill then leaves only the part before it.
  std::string trace;
  for (int i = 0; i < 6000 && trace.empty(); ++i) {
    for (const auto& f : run_traces(dir.path() + "/k")) {
      struct stat st;
      if (stat(f.c_str(), &st) == 0 && st.st_size > 64 * 1024 && read_trace(f).allocs > 1000)
        trace = f;
    }
    if (trace.empty()) usleep(10000);
  }
  ASSERT_FALSE(trace.empty()) << "no trace grew past 64 KiB with 1000 allocations";
  pid_t traced = std::stoi(trace.substr(trace.rfind('/') + 1));
  ASSERT_EQ(kill(traced, SIGKILL), 0);
  int status = 0;
  waitpid(runner, &status, 0);
  // memtrail run dies of the signal its program died of (run_signals.hpp).
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;
  // run cut the trace back to its last whole chunk and ended it with the
  // count of events the program made but never wrote (its event tally).
  TraceSummary t = read_trace(trace);
  EXPECT_TRUE(t.result.ok) << t.result.error;
  EXPECT_TRUE(t.result.complete);
  EXPECT_GT(t.allocs, 1000u);
  const auto ended = static_cast<std::uint64_t>(memtrail::LostReason::process_ended);
  EXPECT_GT(t.lost_by_reason[ended], 0u);
}

// ---- real programs, unchanged ---------------------------------------------------

// Runs `args` plainly and under memtrail; stdout and exit code must match and
// every trace written must read.
void expect_unchanged(const std::vector<std::string>& args, std::size_t min_traces = 1,
                      const std::string& workdir = "") {
  if (!installed(args[0])) GTEST_SKIP() << args[0] << " is not installed";
  TempDir traces;
  Output plain = run(args, workdir);
  const std::string run_dir = traces.path() + "/run";
  std::vector<std::string> traced_args{kMemtrail, "run", "-o", run_dir, "--"};
  traced_args.insert(traced_args.end(), args.begin(), args.end());
  Output traced = run(traced_args, workdir);
  EXPECT_EQ(traced.exit_code, plain.exit_code) << traced.err;
  EXPECT_EQ(traced.out, plain.out);
  auto files = run_traces(run_dir);
  EXPECT_GE(files.size(), min_traces);
  for (const auto& f : files) {
    TraceSummary t = read_trace(f);
    EXPECT_TRUE(t.result.ok) << f << ": " << t.result.error;
    EXPECT_TRUE(t.result.complete) << f;
  }
  // The printed name is the run, and `report` lists every trace of it.
  EXPECT_NE(traced.err.find("memtrail: trace written to " + run_dir), std::string::npos)
      << traced.err;
  Output report = run({kMemtrail, "report", "--json", "--no-symbols", run_dir});
  EXPECT_EQ(report.exit_code, 0) << report.err;
  if (files.size() > 1 && report.exit_code == 0) {
    EXPECT_EQ(nlohmann::json::parse(report.out).at("processes").size(), files.size());
  }
}

TEST(RealPrograms, Python) {
  expect_unchanged({"python3", "-c", "import json; print(json.dumps({'a': [1, 2, 3]}))"});
}
TEST(RealPrograms, Node) {
  expect_unchanged({"node", "-e", "console.log([1,2,3].map(x => x * 2).join(','))"});
}
TEST(RealPrograms, GitVersion) {
  expect_unchanged({"git", "--version"});
}
TEST(RealPrograms, GitInit) {
  TempDir repo;
  expect_unchanged({"git", "init", "-q", repo.path() + "/r"});
}
TEST(RealPrograms, Sqlite) {
  expect_unchanged({"sqlite3", ":memory:",
                    "create table t(x); insert into t values (1),(2),(3); select sum(x) from t;"});
}
TEST(RealPrograms, CmakeVersion) {
  expect_unchanged({"cmake", "--version"});
}
TEST(RealPrograms, ThreadsSample) {
  expect_unchanged({THREADS_BIN, "200", "100"});
}
TEST(RealPrograms, DlopenSample) {
  expect_unchanged({DLOPEN_BIN});
}

TEST(RealPrograms, DlopenThroughTheCallersRunpath) {
  expect_unchanged({RUNPATH_HOST_BIN});
  EXPECT_EQ(run({RUNPATH_HOST_BIN}).out, "runpath plugin says 42\n");
}

// g++ forks and execs cpp/cc1plus, as, collect2 and ld: every one is traced.
TEST(RealPrograms, GxxCompileTracesEveryChild) {
  if (!installed("g++")) GTEST_SKIP() << "g++ is not installed";
  TempDir work;
  {
    FILE* f = fopen((work.path() + "/hello.cpp").c_str(), "w");
    fputs("#include <cstdio>\nint main() { std::puts(\"hello\"); }\n", f);
    fclose(f);
  }
  TempDir traces;
  const std::string run_dir = traces.path() + "/run";
  Output o = run({kMemtrail, "run", "-o", run_dir, "--", "g++", "-O1", "-o", "hello", "hello.cpp"},
                 work.path());
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(run({work.path() + "/hello"}).out, "hello\n");
  std::set<std::string> executables;
  for (const auto& f : run_traces(run_dir)) {
    TraceSummary t = read_trace(f);
    EXPECT_TRUE(t.result.ok) << f << ": " << t.result.error;
    EXPECT_TRUE(t.result.complete) << f;
    // argv[0] as the driver ran it ("as", "/usr/bin/ld"), not the real file
    // name (x86_64-linux-gnu-as).
    std::string argv0 = t.header.command_line.substr(0, t.header.command_line.find(' '));
    executables.insert(argv0.substr(argv0.rfind('/') + 1));
  }
  // The driver and the compiler proper, assembler and linker it runs.
  EXPECT_TRUE(executables.count("cc1plus")) << run_traces(run_dir).size() << " traces";
  EXPECT_TRUE(executables.count("as"));
  EXPECT_TRUE(executables.count("collect2"));
  EXPECT_TRUE(executables.count("ld"));
  EXPECT_GE(run_traces(run_dir).size(), 5u);
}

// An exec keeps the pid: each image's trace is finished before the exec and
// the next image takes a fresh name instead of replacing it; a failed exec
// goes on tracing into a new file.
TEST(MemtrailRun, ExecKeepsEveryImagesTrace) {
  TempDir dir;
  Output o = run({kMemtrail, "run", "-o", "t", "--", EXEC_SELF_BIN}, dir.path());
  ASSERT_EQ(o.exit_code, 0) << o.err;
  std::string pid = o.out.substr(o.out.rfind(' ') + 1);
  pid.pop_back();  // newline
  EXPECT_EQ(o.out, "first image, pid " + pid + "\nsecond image, pid " + pid + "\n");
  // <pid>.<n>.exec_self.mtr: n counts the images of the pid.
  const std::string run_dir = dir.path() + "/t/" + pid;
  ASSERT_EQ(run_traces(dir.path() + "/t"),
            (std::vector<std::string>{run_dir + ".0.exec_self.mtr", run_dir + ".1.exec_self.mtr",
                                      run_dir + ".2.exec_self.mtr"}));
  // Blocks of each image, exactly, in its own file (and no other's).
  const std::pair<std::string, std::uint64_t> expected[] = {{run_dir + ".0.exec_self.mtr", 12345},
                                                            {run_dir + ".1.exec_self.mtr", 23456},
                                                            {run_dir + ".2.exec_self.mtr", 54321}};
  const std::map<std::uint64_t, std::uint64_t> counts = {{12345, 7}, {23456, 3}, {54321, 5}};
  for (const auto& [file, size] : expected) {
    TraceSummary t = read_trace(file);
    ASSERT_TRUE(t.result.ok) << file << ": " << t.result.error;
    EXPECT_TRUE(t.result.complete) << file;
    EXPECT_EQ(t.header.pid, static_cast<std::uint32_t>(std::stoul(pid))) << file;
    for (const auto& [s, n] : counts)
      EXPECT_EQ(t.alloc_sizes[s], s == size ? n : 0u) << file << " size " << s;
    // The image that goes on after the failed exec carries the first file's
    // blocks (issue 27); the exec'd image starts with an empty heap.
    const bool carries = size == 23456;
    for (const auto& [s, n] : counts)
      EXPECT_EQ(t.inherited_sizes[s], carries && s == 12345 ? n : 0u) << file << " size " << s;
  }
}

// A fixed -o name is the user's: a second run (after the first ended)
// replaces the first run's traces.
TEST(MemtrailRun, SecondRunReplacesTheFirstRun) {
  TempDir dir;
  for (int i = 0; i < 2; ++i) {
    Output o = run({kMemtrail, "run", "-o", "c.mtr", "--", CHURN_BIN, "200"}, dir.path());
    ASSERT_EQ(o.exit_code, 0) << o.err;
  }
  EXPECT_EQ(dir.files(), std::vector<std::string>{"c.mtr"});
  ASSERT_EQ(run_traces(dir.path() + "/c.mtr").size(), 1u);
  TraceSummary t = read_trace(only_trace(dir.path() + "/c.mtr"));
  EXPECT_TRUE(t.result.complete);
  EXPECT_EQ(t.leaks[memtrail::LeakClass::direct].blocks, 357u);
}

// A forked subshell and an exec'd child: both traced by default, neither
// with --no-follow.
TEST(MemtrailRun, NoFollowTracesOnlyTheProgramItself) {
  const std::string script = "(echo forked); /bin/echo execd; echo done";
  TempDir plain_dir, followed, not_followed;
  Output plain = run({"sh", "-c", script}, plain_dir.path());
  Output o = run({kMemtrail, "run", "--no-follow", "-o", "t", "--", "sh", "-c", script},
                 not_followed.path());
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.out, plain.out);
  EXPECT_EQ(run_traces(not_followed.path() + "/t").size(), 1u);
  o = run({kMemtrail, "run", "-o", "t", "--", "sh", "-c", script}, followed.path());
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.out, plain.out);
  EXPECT_EQ(run_traces(followed.path() + "/t").size(), 3u);
  for (const auto& f : run_traces(followed.path() + "/t")) {
    TraceSummary t = read_trace(f);
    EXPECT_TRUE(t.result.ok) << f << ": " << t.result.error;
    EXPECT_TRUE(t.result.complete) << f;
  }
}

// ---- exact leak classes at exit (issue 14) ------------------------------------------

// Runs `args` under memtrail with an environment variable whose length
// changes with `run_index`: the stack's layout (and, before the fix, which
// dead slots survived) depends on the environment's size.
TraceSummary traced_run(const std::vector<std::string>& args, int run_index,
                        const std::string& scrub = "") {
  TempDir dir;
  std::vector<std::string> argv{"env", "MEMTRAIL_TEST_PAD=" + std::string(37 * run_index, 'x')};
  if (!scrub.empty()) argv.push_back("MEMTRAIL_SCRUB=" + scrub);
  argv.insert(argv.end(), {kMemtrail, "run", "-o", "t.mtr", "--"});
  argv.insert(argv.end(), args.begin(), args.end());
  Output o = run(argv, dir.path());
  EXPECT_EQ(o.exit_code, 0) << o.err;
  TraceSummary t = read_trace(only_trace(dir.path() + "/t.mtr"));
  EXPECT_TRUE(t.result.ok) << t.result.error;
  return t;
}

// Frames that died before the exit machinery ran (main's, once it returned)
// are not roots; Valgrind and LSan: 1 direct leak of 123 bytes, every run.
TEST(ExitScan, MainsDeadFrameIsNotARoot) {
  for (int i = 0; i < 10; ++i) {
    TraceSummary t = traced_run({DEAD_MAIN_BIN}, i);
    EXPECT_EQ(t.leaked_sizes, std::multiset<std::uint64_t>{123}) << "run " << i;
    EXPECT_EQ(t.leaks[memtrail::LeakClass::direct].blocks, 1u) << "run " << i;
    EXPECT_EQ(t.reachable_sizes.count(123), 0u) << "run " << i;
  }
}

// exit_paths.c states Valgrind's classes for each way out of the program.
struct ExitPath {
  const char* mode;
  std::multiset<std::uint64_t> direct;
  std::uint64_t reachable;  // the size of the block a live frame holds; 0: none
};

TEST(ExitScan, EveryExitPathClassifiesAsValgrindDoes) {
  const ExitPath paths[] = {
      {"", {123, 200}, 0}, {"exit", {55}, 77}, {"thread", {55}, 99}, {"_exit", {55}, 99}};
  for (const auto& path : paths) {
    for (int i = 0; i < 10; ++i) {
      std::vector<std::string> args{EXIT_PATHS_BIN};
      if (*path.mode != '\0') args.push_back(path.mode);
      TraceSummary t = traced_run(args, i);
      EXPECT_EQ(t.leaked_sizes, path.direct) << path.mode << " run " << i;
      EXPECT_EQ(t.leaks[memtrail::LeakClass::indirect].blocks, 0u) << path.mode << " run " << i;
      if (path.reachable != 0) {
        EXPECT_EQ(t.reachable_sizes.count(path.reachable), 1u) << path.mode << " run " << i;
      }
    }
  }
}

// Unwritten bytes of recycled blocks held other blocks' addresses; new
// blocks are now zeroed while tracing. Valgrind and LSan: 200 direct leaks,
// 160,800 bytes, nothing indirect.
TEST(ExitScan, StaleAddressesInRecycledMemoryDoNotHideLeaks) {
  for (int i = 0; i < 3; ++i) {
    TraceSummary t = traced_run({RECYCLED_HEAP_BIN, "200"}, i);
    EXPECT_EQ(t.leaks[memtrail::LeakClass::direct].blocks, 200u) << "run " << i;
    EXPECT_EQ(t.leaks[memtrail::LeakClass::direct].bytes, 160800u) << "run " << i;
    EXPECT_EQ(t.leaks[memtrail::LeakClass::indirect].blocks, 0u) << "run " << i;
  }
}

// MEMTRAIL_SCRUB=0 turns the zeroing off: the same program then shows the
// stale addresses (some leaks indirect), so the switch is real.
TEST(ExitScan, ScrubOffLeavesRecycledBytesAlone) {
  std::uint64_t indirect = 0;
  for (int i = 0; i < 3; ++i)
    indirect +=
        traced_run({RECYCLED_HEAP_BIN, "200"}, i, "0").leaks[memtrail::LeakClass::indirect].blocks;
  EXPECT_GT(indirect, 0u);
}

// The zeroing skips glibc's mmapped chunks (fresh zero pages): an untouched
// 256 MiB block grown to 512 MiB stays out of the resident set.
TEST(ExitScan, ScrubDoesNotCommitMmappedBlocks) {
  TempDir dir;
  Output o = run({kMemtrail, "run", "-o", "t.mtr", "--", BIG_BLOCK_BIN}, dir.path());
  EXPECT_EQ(o.exit_code, 0) << o.out << o.err;
}

// A bad value says so in one line and keeps the default.
TEST(ExitScan, BadScrubValueSaysSo) {
  TempDir dir;
  Output o =
      run({"env", "MEMTRAIL_SCRUB=sometimes", kMemtrail, "run", "-o", "t.mtr", "--", DEAD_MAIN_BIN},
          dir.path());
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.err.find("memtrail: MEMTRAIL_SCRUB=sometimes is not alloc, 0 or a byte count; "
                       "using alloc\n"),
            std::string::npos)
      << o.err;
}

// Blocks a thread frees after the recorder's thread-exit notice (a DTV
// glibc frees when an ending thread evicts a cached stack; the program's
// thread-specific data) are freed in the trace, not left as stale live
// blocks whose recycled bytes the scan would classify. Valgrind and LSan:
// 1 direct leak of 2000 bytes, every run.
TEST(ExitScan, FreesAfterThreadExitNoticeAreRecorded) {
  for (int i = 0; i < 3; ++i) {
    TraceSummary t = traced_run({EVICTED_STACK_BIN}, i);
    EXPECT_EQ(t.leaked_sizes, std::multiset<std::uint64_t>{2000}) << "run " << i;
    EXPECT_TRUE(t.reachable_sizes.empty()) << "run " << i;
    EXPECT_EQ(t.unmatched_frees, 0u) << "run " << i;
    // Every block still live in the trace is classified, and only those.
    std::uint64_t classified = 0;
    for (const auto& [cls, count] : t.leaks) classified += count.blocks;
    EXPECT_EQ(classified, t.live.size()) << "run " << i;
  }
}

// Valgrind and LSan: 1000 direct leaks of 7 bytes.
TEST(ExitScan, PluginLoadedAndUnloadedInALoop) {
  for (int i = 0; i < 10; ++i) {
    TraceSummary t = traced_run({PLUGIN_LOOP_BIN, LOOP_PLUGIN, "1000"}, i);
    EXPECT_EQ(t.leaks[memtrail::LeakClass::direct].blocks, 1000u) << "run " << i;
    EXPECT_EQ(t.leaks[memtrail::LeakClass::direct].bytes, 7000u) << "run " << i;
    EXPECT_EQ(t.reachable_sizes.count(7), 0u) << "run " << i;
  }
}

}  // namespace

// ---- process trees: one run directory, one trace per process image ------------

namespace trees {

// Runs `args` plainly, under `memtrail run -o DIR` and under `memtrail run`
// with the default name: stdout and exit code match the plain run, every
// trace reads (and, unless `killed_children`, ends with its end marker), and
// `report` on the printed name lists every trace.
void expect_tree_unchanged(const std::vector<std::string>& args, std::size_t min_traces,
                           const std::string& workdir, bool killed_children = false) {
  Output plain = run(args, workdir);
  for (bool named : {true, false}) {
    TempDir out;
    std::string run_dir = named ? out.path() + "/named" : "";
    std::vector<std::string> traced_args{kMemtrail, "run"};
    if (named) traced_args.insert(traced_args.end(), {"-o", run_dir});
    traced_args.push_back("--");
    traced_args.insert(traced_args.end(), args.begin(), args.end());
    Output traced = run(traced_args, workdir);
    EXPECT_EQ(traced.exit_code, plain.exit_code) << traced.err;
    EXPECT_EQ(traced.out, plain.out);
    std::string shown = run_dir;
    if (!named) {  // memtrail.PROGRAM.PID in the working directory
      std::vector<std::string> made;
      for (const auto& f : TempDir::list(workdir))
        if (f.rfind("memtrail." + args[0] + ".", 0) == 0) made.push_back(f);
      ASSERT_EQ(made.size(), 1u);
      shown = made[0];
      run_dir = out.path() + "/default";
      ASSERT_EQ(rename((workdir + "/" + shown).c_str(), run_dir.c_str()), 0);
    }
    EXPECT_NE(traced.err.find("memtrail: trace written to " + shown + " ("), std::string::npos)
        << traced.err;
    auto files = run_traces(run_dir);
    EXPECT_GE(files.size(), min_traces) << (named ? "with -o" : "default name");
    for (const auto& f : files) {
      TraceSummary t = read_trace(f);
      EXPECT_TRUE(t.result.ok) << f << ": " << t.result.error;
      if (!killed_children) {
        EXPECT_TRUE(t.result.complete) << f;
      }
    }
    Output report = run({kMemtrail, "report", "--json", "--no-symbols", run_dir});
    EXPECT_EQ(report.exit_code, 0) << report.err;
    if (report.exit_code == 0 && files.size() > 1) {
      auto json = nlohmann::json::parse(report.out);
      EXPECT_EQ(json.at("schema"), "memtrail.run-report/1");
      EXPECT_EQ(json.at("processes").size(), files.size());
    }
  }
}

TEST(ProcessTrees, ShellPipeline) {
  TempDir work;
  expect_tree_unchanged({"sh", "-c", "ls / | wc -l"}, 3, work.path());
}

TEST(ProcessTrees, PythonOsSystem) {
  if (!installed("python3")) GTEST_SKIP() << "python3 is not installed";
  TempDir work;
  expect_tree_unchanged({"python3", "-c", "import os; os.system('true'); print('ok')"}, 2,
                        work.path());
}

// Pool stops its workers with SIGTERM: the recorder finishes their traces
// before they die of it, so every trace is whole.
TEST(ProcessTrees, PythonMultiprocessingPool) {
  if (!installed("python3")) GTEST_SKIP() << "python3 is not installed";
  TempDir work;
  expect_tree_unchanged({"python3", "-c",
                         "from multiprocessing import Pool\n"
                         "if __name__ == '__main__':\n"
                         "  with Pool(3) as p: print(sum(p.map(abs, range(-50, 50))))\n"},
                        4, work.path());
}

// What the Pool's terminate() does to a worker still starting: each child
// gets SIGTERM right after the fork, often inside the recorder's fork
// handler (its file made, its session not yet running). Its trace must
// still be whole, carry the parent's block and record the signal.
TEST(ProcessTrees, ChildTerminatedRightAfterTheForkHasAWholeTrace) {
  TempDir dir;
  const std::string run_dir = dir.path() + "/r";
  Output o = run({kMemtrail, "run", "-o", run_dir, "--", TERM_AT_FORK_BIN});
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  auto files = run_traces(run_dir);
  EXPECT_EQ(files.size(), 13u) << o.err;
  int children = 0;
  for (const auto& f : files) {
    TraceSummary t = read_trace(f);
    EXPECT_TRUE(t.result.ok) << f << ": " << t.result.error;
    EXPECT_TRUE(t.result.complete) << f;
    if (t.signal_marks.empty()) continue;  // the parent
    ++children;
    EXPECT_EQ(t.signal_marks, std::vector<std::uint64_t>{SIGTERM}) << f;
    EXPECT_EQ(t.inherited_sizes[4321], 1u) << f;
  }
  EXPECT_EQ(children, 12);
}

// A SIGTERM landing while the program thread holds the string table (a
// Pool worker interning a Python frame): the handler waited for the writer,
// the writer for the table, and the trace ended at its last flush.
TEST(MemtrailRun, TermWhileInterningStringsEndsAWholeTrace) {
  for (int i = 0; i < 3; ++i) {
    TempDir dir;
    const std::string run_dir = dir.path() + "/r";
    Output o = run({kMemtrail, "run", "-o", run_dir, "--", TERM_IN_INTERN_BIN});
    EXPECT_EQ(o.exit_code, 128 + SIGTERM) << o.err;
    auto files = run_traces(run_dir);
    ASSERT_EQ(files.size(), 1u) << o.err;
    TraceSummary t = read_trace(files[0]);
    EXPECT_TRUE(t.result.ok) << t.result.error;
    EXPECT_TRUE(t.result.complete) << "run " << i + 1 << ": " << o.err;
    EXPECT_EQ(t.signal_marks, std::vector<std::uint64_t>{SIGTERM});
  }
}

TEST(ProcessTrees, MakeWithParallelRules) {
  if (!installed("make")) GTEST_SKIP() << "make is not installed";
  TempDir work;
  {
    FILE* f = fopen((work.path() + "/Makefile").c_str(), "w");
    fputs(
        "all: a b c\n\t@echo all\na:\n\t@echo a > /dev/null\nb:\n\t@echo b > /dev/null\n"
        "c:\n\t@sh -c 'echo c > /dev/null'\n.PHONY: all a b c\n",
        f);
    fclose(f);
  }
  expect_tree_unchanged({"make", "-s", "-j2"}, 4, work.path());
}

TEST(ProcessTrees, GxxCompile) {
  if (!installed("g++")) GTEST_SKIP() << "g++ is not installed";
  TempDir work;
  {
    FILE* f = fopen((work.path() + "/t.cpp").c_str(), "w");
    fputs("int f(int x) { return x * 2; }\n", f);
    fclose(f);
  }
  expect_tree_unchanged({"g++", "-c", "t.cpp"}, 3, work.path());
}

// A run of a shell that runs the leaks sample: report names each process,
// check gives one exit code over all, --pid/--program pick one, and unknown
// ones are an error naming them.
TEST(ProcessTrees, ReportCheckAndSelectionOnARun) {
  TempDir dir;
  const std::string run_dir = dir.path() + "/run";
  Output o =
      run({kMemtrail, "run", "-o", run_dir, "--", "sh", "-c", std::string(LEAKS_BIN) + "; true"});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  ASSERT_GE(run_traces(run_dir).size(), 2u);

  Output text = run({kMemtrail, "report", run_dir});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find(" sh "), std::string::npos) << text.out;
  EXPECT_NE(text.out.find(" leaks "), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("LEAKS of pid "), std::string::npos) << text.out;

  Output one = run({kMemtrail, "report", "--json", "--program", "leaks", run_dir});
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_EQ(nlohmann::json::parse(one.out).at("summary").at("leaked_blocks"), 22);

  // One exit code over all processes: the leaks process fails the limit.
  EXPECT_EQ(run({kMemtrail, "check", "--max-leaked", "1GiB", run_dir}).exit_code, 0);
  Output failing = run({kMemtrail, "check", "--max-leaked-blocks", "21", run_dir});
  EXPECT_EQ(failing.exit_code, 1) << failing.out << failing.err;
  EXPECT_EQ(run({kMemtrail, "check", "--max-leaked-blocks", "22", "--program", "leaks", run_dir})
                .exit_code,
            0);

  for (const std::vector<std::string>& bad :
       std::vector<std::vector<std::string>>{{"report", "--pid", "999999999", run_dir},
                                             {"check", "--program", "nosuch", run_dir},
                                             {"export", "--format", "json", run_dir},
                                             {"diff", run_dir, run_dir},
                                             {"dump", "--pid", "999999999", run_dir},
                                             {"report", "--pid", "1", only_trace(run_dir)}}) {
    if (bad.back().empty()) continue;
    std::vector<std::string> argv{kMemtrail};
    argv.insert(argv.end(), bad.begin(), bad.end());
    Output e = run(argv);
    EXPECT_EQ(e.exit_code, 2) << bad[0] << " " << bad[1] << ": " << e.err;
    EXPECT_EQ(std::count(e.err.begin(), e.err.end(), '\n'), 1) << e.err;
  }
  Output unknown = run({kMemtrail, "report", "--pid", "999999999", run_dir});
  EXPECT_NE(unknown.err.find("pid 999999999"), std::string::npos) << unknown.err;
  Output unknown_program = run({kMemtrail, "report", "--program", "nosuch", run_dir});
  EXPECT_NE(unknown_program.err.find("'nosuch'"), std::string::npos) << unknown_program.err;
}

// Two runs with the same -o at once: one runs, the other refuses in one line
// (exit 2) and leaves the first one's traces whole.
TEST(ProcessTrees, TwoRunsWithTheSameOutputAtOnce) {
  TempDir dir;
  const std::string script =
      "'" + kMemtrail + "' run -o same -- sh -c 'sleep 2; echo A' 2>errA & a=$!; " + "'" +
      kMemtrail + "' run -o same -- sh -c 'sleep 2; echo B' 2>errB & b=$!; " +
      "wait $a; echo codeA=$?; wait $b; echo codeB=$?";
  Output o = run({"sh", "-c", script}, dir.path());
  ASSERT_EQ(o.exit_code, 0) << o.err;
  bool a_ran = o.out.find("codeA=0") != std::string::npos;
  bool b_ran = o.out.find("codeB=0") != std::string::npos;
  ASSERT_NE(a_ran, b_ran) << o.out;
  EXPECT_NE(o.out.find(a_ran ? "codeB=2" : "codeA=2"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find(a_ran ? "A\n" : "B\n"), std::string::npos) << o.out;
  Output refused = run({"cat", dir.path() + (a_ran ? "/errB" : "/errA")});
  EXPECT_EQ(refused.out, "memtrail run: " + dir.path() +
                             "/same is in use by another memtrail run; choose another -o\n");
  auto traces = run_traces(dir.path() + "/same");
  EXPECT_GE(traces.size(), 2u);  // sh, and sleep exec'd or forked from it
  for (const auto& f : traces) {
    TraceSummary t = read_trace(f);
    EXPECT_TRUE(t.result.ok) << f << ": " << t.result.error;
    EXPECT_TRUE(t.result.complete) << f;
  }
}

}  // namespace trees
