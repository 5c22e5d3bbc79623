// Issue 27: "a result that changes from run to run is a bug". Under a loaded
// machine (a full ctest -j2) threads200 and tests/preload/recycled_heap read
// a definite leak "possibly lost" now and then: glibc's main arena (in libc's
// .data, then a root) kept the header address of a chunk split long before,
// and which leaked block came to cover it depended on which thread split
// last. stale_remainder makes that shape certain. Here they run traced
// kAtOnce at a time beside kBusy spinning threads, each from one of the
// suite's four places, for about kBudget: every run must give Valgrind's
// classes (leak_programs.hpp), so every run gives the same answer.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "leak_programs.hpp"

namespace memtrail::leaks {
namespace {

const std::string kMemtrail = MEMTRAIL_BIN;
const std::string kBinDir = LEAK_BIN_DIR;
constexpr int kAtOnce = 6;
constexpr int kBusy = 2;
constexpr auto kBudget = std::chrono::seconds(40);
const char* const kShapes[] = {"threads200", "stale_remainder"};

struct Job {
  std::string binary;
  MemtrailCounts expected;
  RunPlace place;
};

const LeakProgram* find_program(const std::string& name) {
  for (const LeakProgram& p : leak_programs())
    if (name == p.name) return &p;
  return nullptr;
}

// Spinning threads: the traced runs share the CPUs with them.
class Busy {
 public:
  explicit Busy(int threads) {
    for (int i = 0; i < threads; ++i)
      threads_.emplace_back([this] {
        while (!stop_.load(std::memory_order_relaxed)) {
        }
      });
  }
  ~Busy() {
    stop_.store(true);
    for (auto& t : threads_) t.join();
  }

 private:
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
};

TEST(LeakClassesUnderLoad, EveryRunGivesValgrindsClasses) {
  TempDir places("load-place");
  ASSERT_FALSE(places.path().empty());
  std::vector<Job> jobs;
  for (const char* shape : kShapes) {
    const LeakProgram* program = find_program(shape);
    ASSERT_NE(program, nullptr) << shape;
    for (const char* opt : {"O0", "O2"}) {
      std::string binary = std::string("leak_") + shape + "_" + opt;
      std::vector<RunPlace> where = run_places(places.path(), kBinDir, binary);
      ASSERT_FALSE(where.empty()) << binary;
      for (const RunPlace& place : where)
        jobs.push_back({binary, memtrail_expected(*program), place});
    }
  }
  std::vector<std::unique_ptr<TempDir>> traces;
  for (int i = 0; i < kAtOnce; ++i) {
    traces.push_back(std::make_unique<TempDir>("load-trace"));
    ASSERT_FALSE(traces.back()->path().empty());
  }

  std::map<std::string, int> runs, wrong;  // by binary
  const auto start = std::chrono::steady_clock::now();
  {
    Busy busy(kBusy);
    for (std::size_t next = 0; std::chrono::steady_clock::now() - start < kBudget;) {
      std::vector<const Job*> round;
      std::vector<MemtrailRun> results(kAtOnce);
      std::vector<std::thread> threads;
      for (int i = 0; i < kAtOnce; ++i) {
        const Job* job = &jobs[next++ % jobs.size()];
        round.push_back(job);
        threads.emplace_back([&, i, job] {
          results[i] = memtrail_run(kMemtrail, job->place, job->binary, traces[i]->path(), false);
        });
      }
      for (auto& t : threads) t.join();
      for (int i = 0; i < kAtOnce; ++i) {
        const Job& job = *round[i];
        const MemtrailRun& r = results[i];
        SCOPED_TRACE(job.binary + " (" + job.place.label + ")");
        ++runs[job.binary];
        EXPECT_EQ(r.run.exit_code, 0) << r.run.err;
        EXPECT_EQ(r.error, "");
        EXPECT_EQ(r.counts, job.expected);
        if (r.counts != job.expected) ++wrong[job.binary];
      }
    }
  }
  std::ostringstream summary;
  for (const auto& [binary, n] : runs)
    summary << binary << ": " << wrong[binary] << " of " << n << " runs wrong; ";
  RecordProperty("runs", summary.str());
  std::cout << summary.str() << "\n";
}

// tests/python/native_leak.py leaks one 123,457-byte block (libc's malloc
// through ctypes); Valgrind says definitely lost. /usr/bin/python3.11 is
// not PIE: its brk heap lies on a random page up to 1 GiB above its .bss,
// where its .data holds 666 distinct link-time integers (deep-frozen
// bytecode, strings), and the leak covered one in about 3% of runs: it read
// "possibly lost" (issue 27; docs/tracing.md, "A module's constants are no
// pointers"). kPythonRuns runs, kAtOnce at a time beside kBusy spinning
// threads, from two directories and two environment sizes: no run may find
// the leak through a word of a module's data. The scan's report of where a
// possibly-lost block's pointer lay (MEMTRAIL_SCAN_DEBUG) tells the causes
// apart: an integer copied into the heap or pymalloc's arenas (bytecode
// read from a .pyc) can still cover the leak, about 2% of runs, which the
// test counts and bounds but does not fail on (docs/tracing.md).
constexpr int kPythonRuns = 60;
constexpr int kMostOtherPossible = kPythonRuns / 10;
const std::string kNativeLeak = NATIVE_LEAK_PY;

struct PythonRun {
  MemtrailCounts counts;
  std::string err;  // memtrail run's stderr: the scan's debug lines
  bool ok = false;
};

PythonRun python_run(const std::string& dir, const std::string& env, const std::string& trace_dir) {
  const std::string run_dir = trace_dir + "/run";
  PythonRun r;
  CommandResult run = run_command("cd " + shell_quote(dir) + " && env -u PYTHONMALLOC " + env +
                                  "MEMTRAIL_SCAN_DEBUG=1 " + shell_quote(kMemtrail) + " run -o " +
                                  shell_quote(run_dir) + " -- /usr/bin/python3 native_leak.py");
  r.err = run.err;
  CommandResult report = run_command(shell_quote(kMemtrail) +
                                     " report --json --top 0 --no-symbols " + shell_quote(run_dir));
  run_command("rm -rf " + shell_quote(run_dir));
  auto json = nlohmann::json::parse(report.out, nullptr, false);
  if (run.exit_code != 0 || json.is_discarded() || !json.contains("leaks")) return r;
  const auto& leaks = json["leaks"];
  r.counts = {amount_of(leaks, "direct"), amount_of(leaks, "indirect"),
              amount_of(leaks, "possible"), amount_of(leaks, "reachable")};
  r.ok = true;
  return r;
}

// Whether `word` is what the module file holds for the mapped address
// `at`, from the scan's debug text "at 0xA in module data [LO-HI perms
// OFF dev inode PATH]": then the word is the link-time constant the scan
// must not follow. A word the program wrote at run time (a static object's
// field) is an integer elsewhere, like one in the heap.
bool equals_module_file(std::uint64_t word, std::uint64_t at, const std::string& mapping) {
  std::istringstream in(mapping);
  std::string range, perms, dev, path;
  std::uint64_t offset = 0, inode = 0;
  in >> range >> perms >> std::hex >> offset >> dev >> std::dec >> inode >> path;
  if (!path.empty() && path.back() == ']') path.pop_back();
  std::uint64_t low = std::stoull(range.substr(0, range.find('-')), nullptr, 16);
  std::ifstream file(path, std::ios::binary);
  file.seekg(static_cast<std::streamoff>(offset + (at - low)));
  std::uint64_t in_file = 0;
  return file.read(reinterpret_cast<char*>(&in_file), sizeof in_file) && in_file == word;
}

// The scan's debug line for the leak says its pointer was a word of a
// module's data still holding its file's value.
bool leak_reached_through_module(const std::string& err) {
  std::istringstream lines(err);
  for (std::string line; std::getline(lines, line);) {
    std::size_t p = line.find("(123457 B) possibly lost: pointer 0x"),
                m = line.find(" in module data [");
    if (p == std::string::npos || m == std::string::npos) continue;
    std::uint64_t word = std::stoull(line.substr(line.find("0x", p)), nullptr, 16);
    std::uint64_t at = std::stoull(line.substr(line.find(" at 0x", p) + 4), nullptr, 16);
    if (equals_module_file(word, at, line.substr(m + 17))) return true;
  }
  return false;
}

TEST(LeakClassesUnderLoad, NativeLeakIsNeverReachedThroughAModuleConstant) {
  if (!installed("/usr/bin/python3")) GTEST_SKIP() << "/usr/bin/python3 is not installed";
  TempDir places("load-python");
  ASSERT_FALSE(places.path().empty());
  const std::string dirs[2] = {places.path() + "/s", places.path() + "/" + std::string(90, 'd')};
  for (const std::string& dir : dirs)
    ASSERT_EQ(run_command("mkdir -p " + shell_quote(dir) + " && cp " + shell_quote(kNativeLeak) +
                          " " + shell_quote(dir))
                  .exit_code,
              0);
  const std::string envs[2] = {"", "LEAK_SUITE_PAD=" + std::string(8192, 'e') + " "};
  std::vector<std::unique_ptr<TempDir>> traces;
  for (int i = 0; i < kAtOnce; ++i) traces.push_back(std::make_unique<TempDir>("load-trace"));

  const Amount leak{1, 123457};
  int definite = 0, through_module = 0, other_possible = 0;
  {
    Busy busy(kBusy);
    for (int done = 0; done < kPythonRuns; done += kAtOnce) {
      std::vector<PythonRun> results(kAtOnce);
      std::vector<std::thread> threads;
      for (int i = 0; i < kAtOnce; ++i)
        threads.emplace_back([&, i] {
          int n = done + i;
          results[i] = python_run(dirs[n % 2], envs[(n / 2) % 2], traces[i]->path());
        });
      for (auto& t : threads) t.join();
      for (const PythonRun& r : results) {
        ASSERT_TRUE(r.ok) << r.err;
        const bool module = leak_reached_through_module(r.err);
        EXPECT_FALSE(module) << "the leak was reached through a module's constant:\n" << r.err;
        EXPECT_EQ(r.counts.indirect, (Amount{0, 0}));
        if (r.counts.direct == leak && r.counts.possible == Amount{0, 0}) {
          ++definite;
        } else {
          EXPECT_EQ(r.counts.possible, leak) << "neither direct nor possibly lost: " << r.err;
          module ? ++through_module : ++other_possible;
          std::cout << r.err;
        }
      }
    }
  }
  std::ostringstream summary;
  summary << "native_leak.py: " << definite << " of " << kPythonRuns << " runs definitely lost, "
          << through_module << " possibly lost through a module's constant, " << other_possible
          << " through an integer elsewhere";
  RecordProperty("runs", summary.str());
  std::cout << summary.str() << "\n";
  EXPECT_LE(other_possible, kMostOtherPossible) << summary.str();
}

}  // namespace
}  // namespace memtrail::leaks
