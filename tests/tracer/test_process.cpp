// Process-level behaviour: fork children write their own file (also while
// program threads drain), exit and fatal signals flush (keeping the exit
// status), SIGKILL loses at most what was not yet flushed, MEMTRAIL_OUTPUT
// starts tracing at load time.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "memtrail/detail/test_counters.hpp"
#include "memtrail/recorder.hpp"
#include "one_cpu.hpp"
#include "trace_collector.hpp"

namespace memtrail {
namespace {

using test::Collected;

RecorderOptions options_for(const std::string& path) {
  RecorderOptions o;
  o.output = path;
  o.stacks = false;
  o.sample_interval_ms = 0;
  return o;
}

// Marks with aux = 1..n (a string id must exist: intern them first).
void record_numbered(std::uint32_t pool, std::uint64_t first, std::uint64_t n) {
  for (std::uint64_t i = 0; i < n; ++i)
    record_alloc(pool, reinterpret_cast<void*>(0x1000 + (first + i) * 16), first + i + 1, 1);
}

std::vector<std::uint64_t> sizes_of_allocs(const Collected& c) {
  std::vector<std::uint64_t> out;
  for (auto& e : c.events)
    if (e.kind == EventKind::alloc) out.push_back(e.size);
  return out;
}

std::vector<std::uint64_t> iota_from(std::uint64_t first, std::uint64_t n) {
  std::vector<std::uint64_t> v;
  for (std::uint64_t i = 0; i < n; ++i) v.push_back(first + i + 1);
  return v;
}

TEST(Process, ForkChildWritesItsOwnReadableFile) {
  std::string path = test::temp_path("fork.mtr");
  ASSERT_TRUE(start(options_for(path)));
  std::uint32_t pool = register_pool({0, 0, "p", PoolKind::other, MemorySpace::host, -1});
  record_numbered(pool, 0, 100);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    record_numbered(pool, 1000, 50);
    std::exit(0);  // the atexit handler finishes the child's trace
  }
  record_numbered(pool, 100, 100);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  stop();

  // No %p in the name: the child's file is name.<pid>.mtr.
  std::string child_path = path.substr(0, path.size() - 4) + "." + std::to_string(child) + ".mtr";
  Collected parent_c, child_c;
  ReadResult pr = test::read_trace(path, parent_c);
  ReadResult cr = test::read_trace(child_path, child_c);
  std::remove(path.c_str());
  std::remove(child_path.c_str());
  ASSERT_TRUE(pr.ok && pr.complete) << pr.error;
  ASSERT_TRUE(cr.ok && cr.complete) << cr.error;
  EXPECT_EQ(sizes_of_allocs(parent_c), iota_from(0, 200));
  EXPECT_EQ(sizes_of_allocs(child_c), iota_from(1000, 50));
  EXPECT_EQ(child_c.header.pid, static_cast<std::uint32_t>(child));
  EXPECT_EQ(child_c.header.ppid, static_cast<std::uint32_t>(getpid()));
  bool child_has_pool = false;
  for (auto& p : child_c.pools) child_has_pool |= p.id == pool && p.name == "p";
  EXPECT_TRUE(child_has_pool);
}

// fork() takes the drain's lock, which a program thread may hold while it
// drains (busy threads fill the cores: here one core for two). Every fork
// must wait for that pass, not deadlock, and every file must be whole.
TEST(Process, ForksWhileProgramThreadsDrainKeepEveryTrace) {
  test::OneCpu one_cpu;
  ASSERT_TRUE(one_cpu.ok());
  std::string path = test::temp_path("fork-drain.mtr");
  bool started = start(options_for(path));
  std::uint32_t pool = register_pool({0, 0, "p", PoolKind::other, MemorySpace::host, -1});
  std::atomic<bool> done{false};
  std::atomic<std::uint64_t> recorded{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < 2; ++t)
    workers.emplace_back([&, t] {
      std::uint64_t n = 0;
      for (; !done.load(std::memory_order_relaxed); ++n)
        record_alloc(pool, reinterpret_cast<void*>(0x100000 * (t + 1) + n % 4096 * 16), 7, 7);
      recorded.fetch_add(n);
    });
  constexpr int kForks = 12;
  std::vector<pid_t> children;
  for (int i = 0; i < kForks; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    pid_t child = fork();
    if (child == 0) {
      record_numbered(pool, 1000, 50);
      std::exit(0);  // the atexit handler finishes the child's trace
    }
    children.push_back(child);
  }
  done.store(true);
  for (auto& w : workers) w.join();
  std::uint64_t drains = detail::program_thread_drains();
  stop();
  ASSERT_TRUE(started);
  EXPECT_GT(drains, 0u);
  for (pid_t child : children) {
    ASSERT_GT(child, 0);
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    std::string child_path = path.substr(0, path.size() - 4) + "." + std::to_string(child) + ".mtr";
    Collected c;
    ReadResult r = test::read_trace(child_path, c);
    std::remove(child_path.c_str());
    EXPECT_TRUE(r.ok && r.complete) << child_path << ": " << r.error;
    EXPECT_EQ(sizes_of_allocs(c), iota_from(1000, 50));
  }
  Collected parent;
  ReadResult r = test::read_trace(path, parent);
  std::remove(path.c_str());
  ASSERT_TRUE(r.ok && r.complete) << r.error;
  EXPECT_EQ(sizes_of_allocs(parent).size(), recorded.load());
}

TEST(Process, SigkillLeavesAFileReadableUpToTheLastFlush) {
  std::string path = test::temp_path("sigkill.mtr");
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(ready[0]);
    RecorderOptions o = options_for(path);
    o.flush_interval_ms = 3'600'000;  // only the explicit flush below
    if (!start(o)) _exit(3);
    std::uint32_t pool = register_pool({0, 0, "p", PoolKind::other, MemorySpace::host, -1});
    record_numbered(pool, 0, 1000);
    flush();
    char one = 1;
    if (write(ready[1], &one, 1) != 1) _exit(4);
    for (std::uint64_t i = 1000;; ++i) record_numbered(pool, i, 1);  // until killed
  }
  close(ready[1]);
  char byte = 0;
  ASSERT_EQ(read(ready[0], &byte, 1), 1);
  close(ready[0]);
  kill(child, SIGKILL);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

  Collected c;
  ReadResult r = test::read_trace(path, c);
  std::remove(path.c_str());
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_FALSE(r.complete);
  std::vector<std::uint64_t> sizes = sizes_of_allocs(c);
  ASSERT_GE(sizes.size(), 1000u);
  sizes.resize(1000);
  EXPECT_EQ(sizes, iota_from(0, 1000));
}

TEST(Process, FatalSignalFlushesAndKeepsTheExitStatus) {
  for (int sig : {SIGSEGV, SIGABRT, SIGTERM}) {
    std::string path = test::temp_path("signal-" + std::to_string(sig) + ".mtr");
    pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      RecorderOptions o = options_for(path);
      o.flush_interval_ms = 3'600'000;  // only the signal handler flushes
      if (!start(o)) _exit(3);
      std::uint32_t pool = register_pool({0, 0, "p", PoolKind::other, MemorySpace::host, -1});
      record_numbered(pool, 0, 321);
      if (sig == SIGSEGV) *static_cast<volatile int*>(nullptr) = 1;
      raise(sig);
      _exit(5);
    }
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFSIGNALED(status)) << "signal " << sig;
    EXPECT_EQ(WTERMSIG(status), sig);
    Collected c;
    ReadResult r = test::read_trace(path, c);
    std::remove(path.c_str());
    ASSERT_TRUE(r.ok) << r.error;
    // Finished (end marker) with the signal as its last event.
    EXPECT_TRUE(r.complete) << "signal " << sig;
    ASSERT_FALSE(c.events.empty());
    const Event& last = c.events.back();
    EXPECT_EQ(last.kind, EventKind::mark);
    EXPECT_EQ(last.detail, static_cast<std::uint8_t>(MarkDetail::signal));
    EXPECT_EQ(last.size, static_cast<std::uint64_t>(sig));
    EXPECT_EQ(sizes_of_allocs(c), iota_from(0, 321)) << "signal " << sig;
  }
}

TEST(Process, ExitWithoutStopFinishesTheTrace) {
  std::string path = test::temp_path("exit.mtr");
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (!start(options_for(path))) _exit(3);
    std::uint32_t pool = register_pool({0, 0, "p", PoolKind::other, MemorySpace::host, -1});
    record_numbered(pool, 0, 77);
    std::exit(7);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 7);
  Collected c;
  ReadResult r = test::read_trace(path, c);
  std::remove(path.c_str());
  ASSERT_TRUE(r.ok && r.complete) << r.error;
  EXPECT_EQ(sizes_of_allocs(c), iota_from(0, 77));
}

// Runs only as the child of the next test, which enables it explicitly.
TEST(ProcessChild, DISABLED_RecordsWhenStartedByTheEnvironment) {
  if (!std::getenv("TEST_RECORDER_CHILD")) GTEST_SKIP() << "helper of AutostartFromEnvironment";
  ASSERT_TRUE(tracing());
  std::uint32_t pool = register_pool({0, 0, "p", PoolKind::other, MemorySpace::host, -1});
  record_numbered(pool, 0, 5);
}

TEST(Process, AutostartFromEnvironment) {
  std::string path = test::temp_path("autostart-%p.mtr");
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    setenv("MEMTRAIL_OUTPUT", path.c_str(), 1);
    setenv("TEST_RECORDER_CHILD", "1", 1);
    execl("/proc/self/exe", "test_recorder", "--gtest_filter=ProcessChild.*",
          "--gtest_also_run_disabled_tests", nullptr);
    _exit(127);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  std::string child_path = path.replace(path.find("%p"), 2, std::to_string(child));
  Collected c;
  ReadResult r = test::read_trace(child_path, c);
  std::remove(child_path.c_str());
  ASSERT_TRUE(r.ok && r.complete) << r.error;
  EXPECT_EQ(sizes_of_allocs(c), iota_from(0, 5));
}

}  // namespace
}  // namespace memtrail
