// Golden traces for memtrail-gui's tests, recorded at test time by running
// the project's samples under `memtrail run` (the expected numbers come from
// the samples' documented facts or from `memtrail report --json` of the same
// trace), a large synthesized trace for cancelling a load, and the test
// window (every view, recent files left alone) with its open-and-wait.
#pragma once

#include <QCoreApplication>
#include <QSignalSpy>
#include <QString>
#include <fstream>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "main_window.hpp"
#include "memtrail/session.hpp"
#include "memtrail/trace_file.hpp"
#include "run_command.hpp"
#include "run_dir.hpp"
#include "temp_dir.hpp"
#include "views.hpp"

namespace memtrail::test {

// One temporary directory per test binary, removed at exit.
inline TempDir& guiTempDir() {
  static TempDir dir("gui");
  return dir;
}

// `memtrail run -o DIR/NAME -- PROGRAM`; the run directory ("" on failure).
inline std::string recordRun(const std::string& program, const std::string& name) {
  const std::string run = guiTempDir() / name;
  auto r =
      run_command(std::string(MEMTRAIL_BIN) + " run -o " + shell_quote(run) + " -- " + program);
  return r.exit_code == 0 ? run : std::string();
}

// samples/leaks traced once per binary; the trace file ("" on failure).
inline const std::string& leaksTrace() {
  static const std::string trace = only_trace(recordRun(MEMTRAIL_LEAKS_BIN, "leaks"));
  return trace;
}

// The Session of leaksTrace(), opened once per test binary; null with
// `error` set when the recording or the open failed.
inline std::shared_ptr<const memtrail::Session> leaksSession(std::string* error) {
  static memtrail::OpenResult opened =
      leaksTrace().empty() ? memtrail::OpenResult{} : memtrail::Session::open(leaksTrace());
  if (!opened.session)
    *error = leaksTrace().empty() ? "memtrail run of samples/leaks failed" : opened.message;
  return opened.session;
}

// Whether a test window adds what it opens to the recent-files list.
enum class Recent { forget, remember };

// The window memtrail-gui shows: a MainWindow with every view. By default
// it forgets what it opens, so tests leave the recent-files list alone.
class TestWindow : public gui::MainWindow {
 public:
  explicit TestWindow(Recent recent = Recent::forget) {
    gui::addAllViews(*this);
    setRememberRecent(recent == Recent::remember);
  }
};

// Opens `path` in `w` and waits (30 s at most) until every view is ready
// for it; false when they never got ready.
inline bool openUntilAllReady(gui::MainWindow& w, const QString& path) {
  QSignalSpy all(&w, &gui::MainWindow::allReady);
  w.openPath(path);
  return all.wait(30000) || w.allViewsReady();
}

inline nlohmann::json reportJson(const std::string& trace, const std::string& options = {}) {
  auto r = run_command(std::string(MEMTRAIL_BIN) + " report --json --top 0 " + options + " " +
                       shell_quote(trace));
  return r.exit_code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json();
}

// A file holding `text`, in the test directory.
inline std::string writeFile(const std::string& name, const std::string& text) {
  const std::string path = guiTempDir() / name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

// A churn-like trace of `events` events (2 threads, 64 stacks), large
// enough that loading it takes a while.
inline std::string synthesizedTrace(const std::string& name, std::uint64_t events) {
  const std::string path = guiTempDir() / name;
  TraceHeader h;
  h.command_line = "gui test synth";
  TraceWriter w(path, h);
  w.add_thread({1, 1, "t1"});
  w.add_pool({1, 0, "malloc", PoolKind::heap, MemorySpace::host, -1});
  for (std::uint32_t node = 1; node <= 64; ++node)
    w.add_stack_node({node, 0, 0x400000u + 0x40u * node});
  std::uint64_t t = 0, ring[256] = {};
  for (std::uint64_t n = 0; n < events; n += 2) {
    Event a;
    a.time_ns = t += 50;
    a.thread = 1;
    a.pool = 1;
    a.stack = 1 + static_cast<std::uint32_t>(n % 64);
    a.kind = EventKind::alloc;
    a.address = 0x10000000 + 0x40 * n;
    a.size = a.requested = std::uint64_t{8} << (n % 12);
    w.add_event(a);
    Event f = a;
    f.time_ns = t += 50;
    f.kind = EventKind::free;
    f.size = f.requested = 0;
    f.stack = 0;
    std::uint64_t& slot = ring[(n / 2) % 256];
    f.address = slot;
    slot = a.address;
    if (f.address != 0) w.add_event(f);
  }
  w.finish();
  return path;
}

}  // namespace memtrail::test
