// Programs ended by signals under `memtrail run`, and what `memtrail run`
// says about the trace: every trace finished with the signal recorded, the
// program's stdout and exit status as untraced, signals sent to memtrail run
// reaching the program, one true final line (issue 15, items 4, 8, 9).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <pty.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "memtrail/trace_file.hpp"
#include "one_cpu.hpp"
#include "run_command.hpp"
#include "temp_dir.hpp"

namespace {

using memtrail::test::contains;
using memtrail::test::run_command;
using memtrail::test::shell_quote;

const std::string kMemtrail = MEMTRAIL_BIN;
const std::string kSignalEnds = SIGNAL_ENDS_BIN;

// Every test's directory is $TMPDIR/memtrail-signals-test-XXXXXX.
struct TempDir : memtrail::test::TempDir {
  TempDir() : memtrail::test::TempDir("signals") {}
};

// The traces `memtrail run -o PATH` wrote under PATH: PATH itself when it
// is a file, every *.mtr inside when it is a directory (one per process).
std::vector<std::string> traces_at(const std::string& path) {
  return run_command("find " + shell_quote(path) + " -name '*.mtr' -type f | sort").out_lines();
}
// The one trace of a single-process run at PATH.
std::string the_trace(const std::string& path) {
  auto files = traces_at(path);
  return files.size() == 1 ? files[0] : path;
}

struct TraceSummary : memtrail::TraceVisitor {
  memtrail::ReadResult result;
  memtrail::TraceHeader header;
  std::uint64_t allocs = 0, events = 0;
  int signal = 0;                 // from the MarkDetail::signal mark
  bool signal_mark_last = false;  // ... and it is the last event
  void on_header(const memtrail::TraceHeader& h) override { header = h; }
  void on_event(const memtrail::Event& e) override {
    ++events;
    signal_mark_last = false;
    if (e.kind == memtrail::EventKind::alloc) ++allocs;
    if (e.kind == memtrail::EventKind::mark &&
        e.detail == static_cast<std::uint8_t>(memtrail::MarkDetail::signal)) {
      signal = static_cast<int>(e.size);
      signal_mark_last = true;
    }
  }
};

TraceSummary read_trace(const std::string& path) {
  TraceSummary t;
  memtrail::TraceReader reader(path);
  t.result = reader.read(t);
  return t;
}

// memtrail's last line on stderr (a shell may add "Terminated" after it).
std::string last_line(const std::string& text) {
  std::string last;
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t nl = text.find('\n', at);
    if (nl == std::string::npos) nl = text.size();
    std::string line = text.substr(at, nl - at);
    if (line.rfind("memtrail", 0) == 0) last = line;
    at = nl + 1;
  }
  return last;
}

// ---- item 8: a trace ended by a signal is finished and names it ---------

struct Ending {
  const char* mode;
  int signal;  // the program dies of it; 0: it exits
};

class EndedBySignal : public ::testing::TestWithParam<Ending> {};

TEST_P(EndedBySignal, TraceIsFinishedAndNamesTheSignal) {
  const Ending& c = GetParam();
  TempDir dir;
  // No core files: a crash here is the point of the test.
  std::string program = "ulimit -c 0; " + shell_quote(kSignalEnds) + " " + c.mode;
  auto plain = run_command(program);
  auto traced = run_command("ulimit -c 0; " + shell_quote(kMemtrail) + " run -o " +
                            shell_quote(dir.path() + "/t.mtr") + " -- " + shell_quote(kSignalEnds) +
                            " " + c.mode);
  EXPECT_EQ(traced.exit_code, plain.exit_code) << traced.err;
  EXPECT_EQ(traced.exit_code, c.signal ? 128 + c.signal : 3);
  EXPECT_EQ(traced.out, plain.out);
  EXPECT_TRUE(contains(last_line(traced.err), "trace written to")) << traced.err;

  TraceSummary t = read_trace(the_trace(dir.path() + "/t.mtr"));
  ASSERT_TRUE(t.result.ok) << t.result.error;
  EXPECT_TRUE(t.result.complete) << "no end-of-trace marker";
  EXPECT_GE(t.allocs, 3u);
  EXPECT_EQ(t.signal, c.signal);
  if (c.signal) {
    EXPECT_TRUE(t.signal_mark_last);
  }

  auto report = run_command(shell_quote(kMemtrail) + " report " +
                            shell_quote(the_trace(dir.path() + "/t.mtr")));
  EXPECT_EQ(report.exit_code, 0) << report.err;
  std::string name = c.signal ? std::string("SIG") + sigabbrev_np(c.signal) : "";
  EXPECT_EQ(contains(report.out, "ended by signal " + name), c.signal != 0) << report.out;
  EXPECT_FALSE(contains(report.err, "no end-of-trace marker")) << report.err;
  auto json_report = run_command(shell_quote(kMemtrail) + " report --json " +
                                 shell_quote(the_trace(dir.path() + "/t.mtr")));
  auto j = nlohmann::json::parse(json_report.out);
  if (c.signal) {
    EXPECT_EQ(j["trace"]["ended_by_signal"]["name"], name);
    EXPECT_EQ(j["trace"]["ended_by_signal"]["number"], c.signal);
    // The three blocks the program left live are listed (unclassified).
    EXPECT_GE(j["leaks"]["direct_blocks"].get<int>(), 3);
  } else {
    EXPECT_TRUE(j["trace"]["ended_by_signal"].is_null());
  }
}

INSTANTIATE_TEST_SUITE_P(Programs, EndedBySignal,
                         ::testing::Values(Ending{"abort", SIGABRT}, Ending{"segv", SIGSEGV},
                                           Ending{"term", SIGTERM}, Ending{"own-term", 0},
                                           Ending{"default-again", SIGTERM}),
                         [](const auto& info) {
                           std::string n = info.param.mode;
                           for (char& ch : n)
                             if (ch == '-') ch = '_';
                           return n;
                         });

// The program reads back the dispositions it would have untraced (the
// recorder's handler stands in for SIG_DFL): Python installs its
// KeyboardInterrupt handler only where it finds SIG_DFL.
TEST(Dispositions, TheProgramSeesWhatItWouldSeeUntraced) {
  TempDir dir;
  std::string run =
      shell_quote(kMemtrail) + " run -o " + shell_quote(dir.path() + "/t.mtr") + " -- ";
  std::string program = shell_quote(kSignalEnds) + " dispositions";
  auto plain = run_command(program);
  auto traced = run_command(run + program);
  EXPECT_EQ(traced.exit_code, 0) << traced.err;
  EXPECT_EQ(traced.out, plain.out);
  EXPECT_TRUE(contains(plain.out, "2 default flags 0 / default handler")) << plain.out;
  if (run_command("command -v python3").exit_code != 0) GTEST_SKIP() << "python3 missing";
  std::string py =
      "python3 -c 'import signal; print(signal.getsignal(signal.SIGINT), "
      "signal.getsignal(signal.SIGTERM))'";
  auto py_plain = run_command(py);
  auto py_traced = run_command(run + py);
  EXPECT_EQ(py_traced.out, py_plain.out) << py_traced.err;
}

// multiprocessing.Pool stops its workers with SIGTERM (here busy ones, so
// that none can leave on its own first): each worker's trace is finished,
// holds its events and names SIGTERM.
TEST(EndedBySignalPython, MultiprocessingPoolWorkers) {
  if (run_command("command -v python3").exit_code != 0) GTEST_SKIP() << "python3 missing";
  TempDir dir;
  std::string py =
      "python3 -c 'import multiprocessing as mp, time\n"
      "if __name__ == \"__main__\":\n"
      "    mp.set_start_method(\"fork\")\n"
      "    with mp.Pool(3) as p:\n"
      "        print(sum(p.map(abs, range(-50, 50))))\n"
      "        p.map_async(time.sleep, [60] * 3, chunksize=1)\n"
      "        time.sleep(1)'";
  auto plain = run_command(py);
  auto traced = run_command(shell_quote(kMemtrail) + " run -o " +
                            shell_quote(dir.path() + "/t.%p.mtr") + " -- " + py);
  EXPECT_EQ(traced.exit_code, plain.exit_code) << traced.err;
  EXPECT_EQ(traced.out, plain.out);
  // Every trace (a pyenv shim runs shells first) is whole; the Python ones
  // are the parent and its three workers.
  int pythons = 0, ended_by_sigterm = 0;
  for (const auto& f : traces_at(dir.path())) {
    TraceSummary t = read_trace(f);
    EXPECT_TRUE(t.result.ok) << f << ": " << t.result.error;
    EXPECT_TRUE(t.result.complete) << f;
    EXPECT_GT(t.allocs, 0u) << f;
    if (!contains(t.header.command_line, "import multiprocessing") ||
        !contains(t.header.executable, "python"))
      continue;
    ++pythons;
    ended_by_sigterm += t.signal == SIGTERM;
    if (t.signal != 0) {
      EXPECT_EQ(t.signal, SIGTERM) << f;
    }
  }
  EXPECT_EQ(pythons, 4);
  // A worker still sleeping when the pool ends gets SIGTERM; under heavy
  // load one may not have taken its task yet and leave on the sentinel.
  EXPECT_GE(ended_by_sigterm, 1);
}

// ---- item 4: signals sent to memtrail run reach the program ------------------

struct Started {
  pid_t runner = -1;   // memtrail run
  pid_t program = -1;  // from the program's "ready PID" line
};

// Starts memtrail run (in its own process group, as a CI job is) with
// stdout to `out`; waits for the program's "ready PID" line.
Started start_runner(const TempDir& dir, const char* mode, const std::string& out) {
  Started s;
  s.runner = fork();
  if (s.runner == 0) {
    setpgid(0, 0);
    int fd = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int null_fd = open("/dev/null", O_RDWR);
    dup2(fd, 1);
    dup2(null_fd, 2);
    dup2(null_fd, 0);
    std::string trace = dir.path() + "/t.mtr";
    execl(kMemtrail.c_str(), kMemtrail.c_str(), "run", "-o", trace.c_str(), "--",
          kSignalEnds.c_str(), mode, nullptr);
    _exit(127);
  }
  for (int i = 0; i < 3000 && s.program < 0; ++i) {
    std::string text = memtrail::test::slurp(out);
    auto at = text.find("ready ");
    if (at != std::string::npos && text.find('\n', at) != std::string::npos)
      s.program = std::stoi(text.substr(at + 6));
    else
      usleep(10000);
  }
  return s;
}

bool gone(pid_t pid) {
  for (int i = 0; i < 500; ++i) {
    if (kill(pid, 0) != 0) return true;
    usleep(10000);
  }
  return false;
}

TEST(Forwarding, SigtermToMemtrailRunStopsTheProgram) {
  TempDir dir;
  Started s = start_runner(dir, "sleep", dir.path() + "/out");
  ASSERT_GT(s.program, 0) << "the program never said it was ready";
  ASSERT_EQ(kill(s.runner, SIGTERM), 0);
  int status = 0;
  ASSERT_EQ(waitpid(s.runner, &status, 0), s.runner);
  bool program_gone = gone(s.program);
  if (!program_gone) kill(s.program, SIGKILL);
  EXPECT_TRUE(program_gone) << "the program outlived memtrail run";
  // memtrail run dies of the signal its program died of.
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM) << status;
  TraceSummary t = read_trace(the_trace(dir.path() + "/t.mtr"));
  EXPECT_TRUE(t.result.ok) << t.result.error;
  EXPECT_TRUE(t.result.complete);
  EXPECT_EQ(t.signal, SIGTERM);
}

// SIGTERM while the program's own thread drains its events (on one CPU the
// writer stands aside, so a busy thread drains much of the time): the
// signal waits for the pass, then the trace is finished. Before, one landing
// in a pass left the trace without its end (about one run in three here).
TEST(Forwarding, SigtermDuringAProgramThreadsDrainFinishesTheTrace) {
  for (int run = 0; run < 6; ++run) {
    TempDir dir;
    Started s;
    {
      memtrail::test::OneCpu one_cpu;  // inherited by memtrail run and the program
      s = start_runner(dir, "churn", dir.path() + "/out");
    }
    ASSERT_GT(s.program, 0) << "the program never said it was ready";
    usleep(150000 + 37000 * run);  // past the start, into the churn
    ASSERT_EQ(kill(s.runner, SIGTERM), 0);
    int status = 0;
    ASSERT_EQ(waitpid(s.runner, &status, 0), s.runner);
    if (!gone(s.program)) kill(s.program, SIGKILL);
    TraceSummary t = read_trace(the_trace(dir.path() + "/t.mtr"));
    EXPECT_TRUE(t.result.ok) << "run " << run << ": " << t.result.error;
    EXPECT_TRUE(t.result.complete) << "run " << run;
    EXPECT_EQ(t.signal, SIGTERM) << "run " << run;
    EXPECT_GT(t.allocs, 10000u) << "run " << run;
  }
}

// A program that blocks SIGTERM to read it from a signalfd gets it: the
// recorder's writer thread never takes a signal meant for the program.
TEST(Forwarding, AProgramThatWaitsForSigtermGetsIt) {
  TempDir dir;
  std::string out = dir.path() + "/out";
  Started s = start_runner(dir, "signalfd", out);
  ASSERT_GT(s.program, 0);
  ASSERT_EQ(kill(s.runner, SIGTERM), 0);
  int status = 0;
  ASSERT_EQ(waitpid(s.runner, &status, 0), s.runner);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_TRUE(contains(memtrail::test::slurp(out), "signalfd read signal 15"))
      << memtrail::test::slurp(out);
  TraceSummary t = read_trace(the_trace(dir.path() + "/t.mtr"));
  EXPECT_TRUE(t.result.complete);
  EXPECT_EQ(t.signal, 0);
}

// kill to memtrail's pid: the program's SIGINT handler runs exactly once.
TEST(Forwarding, SigintToMemtrailRunReachesTheProgramOnce) {
  TempDir dir;
  std::string out = dir.path() + "/out";
  Started s = start_runner(dir, "count-int", out);
  ASSERT_GT(s.program, 0);
  ASSERT_EQ(kill(s.runner, SIGINT), 0);
  int status = 0;
  ASSERT_EQ(waitpid(s.runner, &status, 0), s.runner);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_TRUE(contains(memtrail::test::slurp(out), "SIGINT received 1 times"))
      << memtrail::test::slurp(out);
}

// Ctrl-C on a terminal signals the whole foreground process group, the
// program included: memtrail run must not send it a second one.
TEST(Forwarding, CtrlCOnATerminalReachesTheProgramOnce) {
  TempDir dir;
  std::string out = dir.path() + "/out";
  int master = -1;
  pid_t runner = forkpty(&master, nullptr, nullptr, nullptr);
  ASSERT_GE(runner, 0);
  if (runner == 0) {
    int fd = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(fd, 1);
    std::string trace = dir.path() + "/t.mtr";
    execl(kMemtrail.c_str(), kMemtrail.c_str(), "run", "-o", trace.c_str(), "--",
          kSignalEnds.c_str(), "count-int", nullptr);
    _exit(127);
  }
  bool ready = false;
  for (int i = 0; i < 3000 && !ready; ++i) {
    ready = contains(memtrail::test::slurp(out), "ready ");
    if (!ready) usleep(10000);
  }
  ASSERT_TRUE(ready);
  char ctrl_c = '\x03';
  ASSERT_EQ(write(master, &ctrl_c, 1), 1);
  int status = 0;
  // Drain the terminal while waiting, so the runner never blocks on it.
  while (waitpid(runner, &status, WNOHANG) == 0) {
    char buffer[256];
    fd_set fds;
    FD_ZERO(&fds);
    FD_SET(master, &fds);
    timeval tv{0, 20000};
    if (select(master + 1, &fds, nullptr, nullptr, &tv) > 0 &&
        read(master, buffer, sizeof buffer) <= 0)
      usleep(10000);
  }
  close(master);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_TRUE(contains(memtrail::test::slurp(out), "SIGINT received 1 times"))
      << memtrail::test::slurp(out);
}

// ---- item 9: one true final line --------------------------------------------

// Runs `true`-like work (the signal_ends program, exiting 0) traced into
// `output`; stdout and exit code must equal the untraced run's.
memtrail::test::CommandResult run_into(const std::string& output,
                                       const std::string& mode = "none") {
  std::string program = shell_quote(kSignalEnds) + " " + mode;
  auto plain = run_command(program);
  auto traced =
      run_command(shell_quote(kMemtrail) + " run -o " + shell_quote(output) + " -- " + program);
  EXPECT_EQ(traced.exit_code, plain.exit_code) << traced.err;
  EXPECT_EQ(traced.out, plain.out);
  return traced;
}

// An -o that cannot be a run directory is a usage error, said in one line
// before the program starts (exit 2); nothing claims a trace was written.
memtrail::test::CommandResult refused(const std::string& command) {
  auto r = run_command(command);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err_lines(), 1) << r.err;
  EXPECT_TRUE(r.out.empty()) << "the program ran: " << r.out;
  EXPECT_FALSE(contains(r.err, "trace written")) << r.err;
  return r;
}

TEST(FinalMessage, OutputIsADirectoryOfOtherFiles) {
  TempDir dir;
  run_command("echo data > " + shell_quote(dir.path() + "/notes.txt"));
  auto r = refused(shell_quote(kMemtrail) + " run -o " + shell_quote(dir.path()) + " -- " +
                   shell_quote(kSignalEnds) + " none");
  EXPECT_TRUE(contains(r.err, "holds 'notes.txt', so it is not a memtrail run directory")) << r.err;
}

TEST(FinalMessage, OutputIsDevFull) {
  auto r = refused(shell_quote(kMemtrail) + " run -o /dev/full -- " + shell_quote(kSignalEnds) +
                   " none");
  EXPECT_TRUE(contains(r.err, "/dev/full exists and is not a run directory")) << r.err;
}

TEST(FinalMessage, UnwritableDirectory) {
  TempDir dir;
  std::string locked = dir.path() + "/locked";
  ASSERT_EQ(mkdir(locked.c_str(), 0700), 0);
  std::string command;
  if (geteuid() == 0) {
    // root writes anywhere: run memtrail as nobody, who cannot enter `locked`.
    if (run_command("command -v setpriv").exit_code != 0) GTEST_SKIP() << "setpriv missing";
    chmod(dir.path().c_str(), 0755);
    command = "setpriv --reuid=65534 --regid=65534 --clear-groups ";
  } else {
    chmod(locked.c_str(), 0500);
  }
  auto r = refused(command + shell_quote(kMemtrail) + " run -o " + shell_quote(locked + "/t") +
                   " -- " + shell_quote(kSignalEnds) + " none");
  EXPECT_TRUE(contains(r.err, "cannot create run directory " + locked + "/t: Permission denied"))
      << r.err;
}

// A file system too small for the trace: the program is unaffected, the
// trace stops before it takes the space left to the program (its reserve,
// at least 1 MiB, exceeds this 256 KiB), the recorder says how many events
// it did not write, and the final line says the run is not whole instead
// of "written".
TEST(FinalMessage, FullFileSystem) {
  if (geteuid() != 0) GTEST_SKIP() << "mounting a tmpfs needs root";
  TempDir dir;
  std::string mnt = dir.path() + "/small";
  ASSERT_EQ(mkdir(mnt.c_str(), 0700), 0);
  if (mount("tmpfs", mnt.c_str(), "tmpfs", 0, "size=256k") != 0)
    GTEST_SKIP() << "cannot mount a tmpfs here: " << std::strerror(errno);
  std::string program = std::string(CHURN_BIN) + " 300000";
  auto plain = run_command(program);
  auto r =
      run_command(shell_quote(kMemtrail) + " run -o " + shell_quote(mnt + "/t") + " -- " + program);
  umount(mnt.c_str());
  EXPECT_EQ(r.exit_code, plain.exit_code) << r.err;
  EXPECT_EQ(r.out, plain.out);
  EXPECT_TRUE(contains(r.err, "events not written to ")) << r.err;
  EXPECT_TRUE(contains(r.err, "file system had less than 1 MiB free")) << r.err;
  EXPECT_FALSE(contains(r.err, "trace written")) << r.err;
  EXPECT_TRUE(contains(last_line(r.err), "is not whole: events lost: pid ")) << r.err;
}

TEST(FinalMessage, AWholeTraceSaysWritten) {
  TempDir dir;
  auto r = run_into(dir.path() + "/t");
  EXPECT_EQ(last_line(r.err), "memtrail: trace written to " + dir.path() + "/t (1 trace)") << r.err;
}

}  // namespace
