// `memtrail dump`: exact text of records and events, the summary line, the
// reader's warning on stderr and exit status 2 with a one-line error.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <iterator>

#include "memtrail/trace_file.hpp"
#include "trace_collector.hpp"

namespace memtrail {
namespace {

struct CliRun {
  int status = -1;
  std::string out, err;
};

CliRun run_cli(const std::string& args) {
  std::string err_path = test::temp_path("dump-stderr.txt");
  std::string cmd = std::string(MEMTRAIL_CLI) + " dump " + args + " 2>" + err_path;
  CliRun r;
  std::FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  std::ifstream e(err_path);
  r.err.assign(std::istreambuf_iterator<char>(e), {});
  std::remove(err_path.c_str());
  return r;
}

struct DumpCli : ::testing::Test {
  std::string path = test::temp_path("dump.mtr");
  void TearDown() override { std::remove(path.c_str()); }

  void write_trace() {
    TraceHeader h;
    h.pid = 7;
    h.ppid = 1;
    h.command_line = "prog \"x\"";
    h.executable = "/bin/prog";
    h.hostname = "box";
    TraceWriter w(path, h);
    w.add_string(1, "hello\nworld");
    w.add_thread({1, 4242, "main"});
    w.add_pool({1, 0, "malloc", PoolKind::heap, MemorySpace::host, -1});
    w.add_stack_node({1, 0, 0x401000});
    w.add_scope({1, "step", ScopeKind::iteration, 1});
    w.add_module({1, "/bin/prog", 0x400000, 0x400000, 0x500000, "abcd"});
    w.add_event({10, 1, 1, 1, EventKind::alloc, 1, 0x1000, 64, 60, 0});
    w.add_event({20, 1, 1, 0, EventKind::free, 9, 0x1000, 0, 0, 0});
    w.add_event({30, 0, 0, 0, EventKind::sample, 0, 100, 200, 300, 400});
    w.add_event({40, 1, 0, 0, EventKind::mark, 0, 0, 0, 0, 1});
    w.add_event({50, 1, 1, 0, EventKind::scope_begin, 0, 0, 0, 0, 1});
    w.add_event({60, 1, 1, 1, EventKind::reachability, 1, 0x2000, 8, 0, 0});
  }
};

TEST_F(DumpCli, PrintsEveryRecordAndEventOnOneLine) {
  write_trace();
  CliRun r = run_cli(path);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  std::string expected_tail =
      "string 1 \"hello\\x0aworld\"\n"
      "thread 1 tid=4242 name=\"main\"\n"
      "pool 1 parent=0 name=\"malloc\" kind=heap space=host device=-1\n"
      "stack 1 parent=0 ip=0x401000\n"
      "scope 1 name=\"step\" kind=iteration pool=1\n"
      "module 1 path=\"/bin/prog\" load=0x400000 start=0x400000 end=0x500000 build_id=abcd\n"
      "10 t1 alloc pool=1 addr=0x1000 size=64 requested=60 stack=1 fn=malloc align=0\n"
      "20 t1 free pool=1 addr=0x1000 size=0 requested=0 stack=0 fn=free\n"
      "30 t0 sample pool=0 addr=0x64 size=200 requested=300 stack=0 rss=100 heap_used=200 "
      "heap_reserved=300 device_free=400\n"
      "40 t1 mark pool=0 addr=0x0 size=0 requested=0 stack=0 text=\"hello\\x0aworld\"\n"
      "50 t1 scope_begin pool=1 addr=0x0 size=0 requested=0 stack=0 scope=1\n"
      "60 t1 reachability pool=1 addr=0x2000 size=8 requested=0 stack=1 class=direct\n"
      "# 6 events, 1 chunks, 1 strings, 1 modules, 1 threads, 1 pools, 1 stack nodes, 1 scopes; "
      "complete\n";
  ASSERT_GE(r.out.size(), expected_tail.size());
  EXPECT_EQ(r.out.substr(r.out.size() - expected_tail.size()), expected_tail) << r.out;
  EXPECT_EQ(r.out.rfind("header version=1 pid=7 ppid=1 ", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("command=\"prog \\\"x\\\"\" executable=\"/bin/prog\" host=\"box\"\n"),
            std::string::npos);
}

TEST_F(DumpCli, LimitAndNoTables) {
  write_trace();
  CliRun r = run_cli("--no-tables --limit 2 " + path);
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out,
            "10 t1 alloc pool=1 addr=0x1000 size=64 requested=60 stack=1 fn=malloc align=0\n"
            "20 t1 free pool=1 addr=0x1000 size=0 requested=0 stack=0 fn=free\n"
            "# 2 events, 0 chunks, 1 strings, 1 modules, 1 threads, 1 pools, 1 stack nodes, 1 "
            "scopes; stopped at --limit\n");
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 3);
}

TEST_F(DumpCli, CutFileWarnsOnStderrAndExitsZero) {
  write_trace();
  std::ifstream in(path, std::ios::binary);
  std::string data(std::istreambuf_iterator<char>(in), {});
  in.close();
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(data.data(), data.size() - 5);
  CliRun r = run_cli(path);
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("; incomplete (no end marker)\n"), std::string::npos) << r.out;
  EXPECT_EQ(r.err,
            "memtrail dump: warning: " + path + ": dropped 16 bytes after the last whole chunk\n");
}

TEST_F(DumpCli, BadInputExitsTwoWithOneLine) {
  std::ofstream(path) << "definitely not a trace";
  CliRun r = run_cli(path);
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "memtrail dump: " + path + ": not a memtrail trace (bad magic)\n");

  r = run_cli("/nonexistent/x.mtr");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1);

  r = run_cli("--frobnicate " + path);
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "memtrail dump: unknown option '--frobnicate' (try 'memtrail dump --help')\n");

  r = run_cli("--limit -3 " + path);
  EXPECT_EQ(r.status, 2);

  r = run_cli("");
  EXPECT_EQ(r.status, 2);

  r = run_cli("--help");
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("usage: memtrail dump"), std::string::npos);
}

}  // namespace
}  // namespace memtrail
