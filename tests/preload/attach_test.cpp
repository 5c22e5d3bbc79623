// `memtrail attach` end to end: a running program, attached by the real CLI
// through gdb after it started, traced for a window it is driven through,
// detached, and still running; the trace counts exactly that window.
// Refusals (no such process, another tracer, ptrace disabled) are one line
// and exit 2.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "run_command.hpp"
#include "temp_dir.hpp"

namespace {

using memtrail::test::CommandResult;
using memtrail::test::run_command;
using memtrail::test::shell_quote;
using memtrail::test::slurp;
using memtrail::test::TempDir;

const std::string kMemtrail = MEMTRAIL_BIN;

bool have_gdb() {
  return run_command("command -v gdb").exit_code == 0;
}

// attach_loop with its stdin and stdout on pipes.
class Loop {
 public:
  explicit Loop(const char* arg = nullptr) {
    // A program that died must fail the test, not kill it with SIGPIPE.
    signal(SIGPIPE, SIG_IGN);
    int in[2], out[2];
    if (pipe(in) != 0 || pipe(out) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      dup2(in[0], 0);
      dup2(out[1], 1);
      close(in[1]);
      close(out[0]);
      execl(ATTACH_LOOP_BIN, ATTACH_LOOP_BIN, arg, nullptr);
      _exit(127);
    }
    close(in[0]);
    close(out[1]);
    to_ = in[1];
    from_ = out[0];
  }
  ~Loop() {
    if (pid_ > 0 && !reaped_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    close(to_);
    close(from_);
  }
  pid_t pid() const { return pid_; }
  bool send(char c) { return write(to_, &c, 1) == 1; }
  // The next line it prints ("" at end of file).
  std::string line() {
    std::string s;
    char c;
    while (read(from_, &c, 1) == 1 && c != '\n') s += c;
    return s;
  }
  int wait_exit() {
    int status = 0;
    waitpid(pid_, &status, 0);
    reaped_ = true;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

 private:
  pid_t pid_ = -1;
  int to_ = -1, from_ = -1;
  bool reaped_ = false;
};

// `memtrail attach` in the background, its stderr in a file.
struct Attach {
  pid_t pid = -1;
  std::string err_file;
  Attach(const std::string& args, const std::string& err) : err_file(err) {
    pid = fork();
    if (pid == 0) {
      int fd = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(fd, 2);
      execl("/bin/sh", "sh", "-c", ("exec " + kMemtrail + " attach " + args).c_str(), nullptr);
      _exit(127);
    }
  }
  // Waits until its stderr holds `text` (true) or it exited (false).
  bool wait_for(const std::string& text, int seconds) {
    for (int i = 0; i < seconds * 10; ++i) {
      if (slurp(err_file).find(text) != std::string::npos) return true;
      if (waitpid(pid, &status, WNOHANG) == pid) {
        exited = true;
        return slurp(err_file).find(text) != std::string::npos;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
  }
  int finish() {
    if (!exited) waitpid(pid, &status, 0);
    exited = true;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  int status = 0;
  bool exited = false;
};

int lines(const std::string& text) {
  int n = 0;
  for (char c : text) n += c == '\n';
  return n;
}

TEST(Attach, TracesOnlyTheAttachedWindowAndLeavesTheProcessRunning) {
  if (!have_gdb()) GTEST_SKIP() << "gdb is not installed";
  TempDir dir("attach");
  Loop loop;
  ASSERT_EQ(loop.line(), "ready");
  std::string trace = dir / "window.mtr";
  Attach attach(std::to_string(loop.pid()) + " -o " + shell_quote(trace), dir / "attach.err");
  ASSERT_TRUE(attach.wait_for("tracing into", 120)) << slurp(attach.err_file);

  // A second attach while the first holds it: one line, exit 2.
  CommandResult twice = run_command(kMemtrail + " attach " + std::to_string(loop.pid()));
  EXPECT_EQ(twice.exit_code, 2);
  EXPECT_EQ(twice.err, "memtrail attach: process " + std::to_string(loop.pid()) +
                           " is already traced by memtrail\n");

  ASSERT_TRUE(loop.send('a'));
  ASSERT_EQ(loop.line(), "done 1");
  ASSERT_TRUE(loop.send('m'));
  ASSERT_EQ(loop.line(), "mapped");
  kill(attach.pid, SIGINT);
  EXPECT_EQ(attach.finish(), 0) << slurp(attach.err_file);
  EXPECT_NE(
      slurp(attach.err_file)
          .find("detached from process " + std::to_string(loop.pid()) + ", which keeps running"),
      std::string::npos)
      << slurp(attach.err_file);

  // Still running, untraced: another step, then a clean exit.
  ASSERT_TRUE(loop.send('a'));
  EXPECT_EQ(loop.line(), "done 2");
  ASSERT_TRUE(loop.send('m'));
  EXPECT_EQ(loop.line(), "mapped");
  ASSERT_TRUE(loop.send('q'));
  EXPECT_EQ(loop.wait_exit(), 0);

  CommandResult report = run_command(kMemtrail + " report --json --top 0 " + shell_quote(trace));
  ASSERT_EQ(report.exit_code, 0) << report.err;
  auto j = nlohmann::json::parse(report.out);
  const auto& s = j["summary"];
  // Step 1 only: 100 x 48 B + 10 x 24 B, 40 of them freed; the 5 start-up
  // blocks freed in it were allocated before the attach (unmatched frees).
  EXPECT_EQ(s["allocations"], 110);
  EXPECT_EQ(s["bytes_allocated"], 100 * 48 + 10 * 24);
  EXPECT_EQ(s["frees"], 40);
  EXPECT_EQ(s["unmatched_frees"], 5);
  EXPECT_EQ(s["live_at_range_end_blocks"], 70);
  EXPECT_EQ(s["live_at_range_end_bytes"], 60 * 48 + 10 * 24);
  EXPECT_EQ(j["trace"]["attached"], true);
  EXPECT_EQ(j["trace"]["pid"], loop.pid());
  // The window's mmaps (3 regions of 64 KiB, one unmapped), not the ones
  // after the detach.
  bool mmap_pool = false;
  for (const auto& p : j["pools"])
    if (p["name"] == "mmap") {
      mmap_pool = true;
      EXPECT_EQ(p["segment_reserves"], 3) << p.dump();
      EXPECT_EQ(p["segment_releases"], 1) << p.dump();
      EXPECT_EQ(p["final_reserved_bytes"], 2 * 65536) << p.dump();
    }
  EXPECT_TRUE(mmap_pool) << report.out;

  CommandResult text = run_command(kMemtrail + " report " + shell_quote(trace));
  EXPECT_NE(text.out.find("attached               to a running process: blocks allocated "
                          "before are unknown (5 frees of them)"),
            std::string::npos)
      << text.out;
  // The process kept running: what it held at the detach is not "leaked".
  EXPECT_NE(text.out.find("\nSUMMARY: memtrail: attached: 3120 byte(s) in 70 allocation(s) still "
                          "live at detach (not leak-checked).\n"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("\n  live at detach         3.05 KiB in 70 blocks (not leak-checked)\n"),
            std::string::npos)
      << text.out;
  EXPECT_EQ(text.out.find(" leaked in "), std::string::npos) << text.out;
}

// A library dlopen'ed while attached is patched too (its allocations are in
// the trace), and one dlclose'd before the detach is not written to then
// (its slots are unmapped: writing them would kill the process).
TEST(Attach, LibrariesLoadedWhileAttachedAreTracedAndUnloadedOnesSkipped) {
  if (!have_gdb()) GTEST_SKIP() << "gdb is not installed";
  TempDir dir("attach-dlopen");
  Loop loop(DLOPEN_PLUGIN);
  ASSERT_EQ(loop.line(), "ready");
  std::string trace = dir / "plugin.mtr";
  Attach attach(std::to_string(loop.pid()) + " -o " + shell_quote(trace), dir / "attach.err");
  ASSERT_TRUE(attach.wait_for("tracing into", 120)) << slurp(attach.err_file);
  ASSERT_TRUE(loop.send('d'));
  ASSERT_EQ(loop.line(), "plugin");
  // The writer drains every 100 ms; let it see the plugin's frames mapped.
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  ASSERT_TRUE(loop.send('u'));
  ASSERT_EQ(loop.line(), "unloaded");
  kill(attach.pid, SIGINT);
  EXPECT_EQ(attach.finish(), 0) << slurp(attach.err_file);
  ASSERT_TRUE(loop.send('a'));
  EXPECT_EQ(loop.line(), "done 1");
  ASSERT_TRUE(loop.send('q'));
  EXPECT_EQ(loop.wait_exit(), 0);

  CommandResult report = run_command(kMemtrail + " report --json --top 0 " + shell_quote(trace));
  ASSERT_EQ(report.exit_code, 0) << report.err;
  auto j = nlohmann::json::parse(report.out);
  int leak_site = 0, state_site = 0;
  for (const auto& site : j["top_sites"]["bytes"]) {
    if (site["bytes_allocated"] == 4242 && site["calls"] == 1) ++leak_site;
    if (site["bytes_allocated"] == 128 && site["calls"] == 1) ++state_site;
  }
  EXPECT_EQ(leak_site, 1) << report.out;
  EXPECT_EQ(state_site, 1) << report.out;
}

TEST(Attach, NoSuchProcessIsOneLineAndExit2) {
  CommandResult r = run_command(kMemtrail + " attach 999999999");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "memtrail attach: no process with pid 999999999\n");
  CommandResult bad = run_command(kMemtrail + " attach 12x");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(lines(bad.err), 1) << bad.err;
  EXPECT_NE(bad.err.find("'12x' is not a process id"), std::string::npos);
  CommandResult run_p = run_command(kMemtrail + " run -p 999999999");
  EXPECT_EQ(run_p.exit_code, 2);
  EXPECT_EQ(run_p.err, "memtrail attach: no process with pid 999999999\n");
}

// A process that another tracer (this test) holds.
TEST(Attach, AnotherTracerIsOneLineAndExit2) {
  pid_t child = fork();
  if (child == 0) {
    ptrace(PTRACE_TRACEME, 0, nullptr, nullptr);
    for (;;) pause();
  }
  ASSERT_GT(child, 0);
  // TRACEME is done once /proc says so.
  std::string status_path = "/proc/" + std::to_string(child) + "/status";
  std::string expected = "TracerPid:\t" + std::to_string(getpid());
  for (int i = 0; i < 100 && slurp(status_path).find(expected) == std::string::npos; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CommandResult r = run_command(kMemtrail + " attach " + std::to_string(child));
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("memtrail attach: process " + std::to_string(child) +
                       " is already traced by process " + std::to_string(getpid())),
            std::string::npos)
      << r.err;
}

// Yama's ptrace_scope = 3 (read from a file the test names: the real sysctl
// is not the test's to change, and this kernel may have no Yama at all).
TEST(Attach, PtraceDisabledIsOneLineAndExit2) {
  TempDir dir("attach-scope");
  std::ofstream(dir / "ptrace_scope") << "3\n";
  Loop loop;
  ASSERT_EQ(loop.line(), "ready");
  CommandResult r = run_command("MEMTRAIL_PTRACE_SCOPE_FILE=" + shell_quote(dir / "ptrace_scope") +
                                " " + kMemtrail + " attach " + std::to_string(loop.pid()));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "memtrail attach: ptrace is disabled on this machine (kernel.yama.ptrace_scope = 3)\n");
  ASSERT_TRUE(loop.send('q'));
  EXPECT_EQ(loop.wait_exit(), 0);
}

}  // namespace
