// memtrail attach PID: traces a running process from now on, the way
// heaptrack does: gdb loads libmemtrail_preload.so into it and calls
// memtrail_attach_start(), which starts the recorder and points the loaded
// modules' allocation GOT slots at the tracer (tracer/preload/got_patch.hpp).
// On Ctrl-C, SIGTERM, SIGHUP or --duration, gdb calls memtrail_attach_stop():
// the slots are written back and the trace finished; the process keeps
// running. If memtrail itself dies, the process goes on being traced until it
// exits. Blocks allocated before the attach are unknown (docs/tracing.md).
#include <limits.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <string_view>

#include "attach_gdb.hpp"
#include "attach_permission.hpp"
#include "commands.hpp"
#include "proc_files.hpp"

namespace memtrail::cli {
namespace {

constexpr int kGdbTimeoutS = 60;

struct AttachOptions {
  pid_t pid = 0;
  std::string output;
  double duration_s = 0;  // 0 = until a signal or the process exits
};

const char* const kUsage =
    "usage: memtrail attach PID [-o FILE] [--duration SECONDS]\n"
    "       memtrail run -p PID [-o FILE] [--duration SECONDS]\n"
    "\n"
    "Traces a running process from now on (gdb injects the tracer), until\n"
    "Ctrl-C, SIGTERM, --duration or the process's exit; then detaches and the\n"
    "process keeps running. Blocks allocated before the attach are unknown.\n"
    "\n"
    "  -o, --output FILE   trace file (default memtrail.PROGRAM.PID.mtr)\n"
    "  --duration SECONDS  detach after this long\n";

int usage_error(const std::string& message) {
  std::fprintf(stderr, "memtrail attach: %s (try 'memtrail attach --help')\n", message.c_str());
  return 2;
}

int refuse(const std::string& message) {
  std::fprintf(stderr, "memtrail attach: %s\n", message.c_str());
  return 2;
}

bool parse_pid(std::string_view text, pid_t* out) {
  if (text.empty() || text.size() > 9) return false;
  long value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + (c - '0');
  }
  *out = static_cast<pid_t>(value);
  return value > 0;
}

// Returns -1 when parsed, else the exit code.
int parse(int argc, char** argv, AttachOptions* o) {
  bool have_pid = false;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    auto need_value = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    if (arg == "-h" || arg == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (arg == "-o" || arg == "--output") {
      const char* v = need_value();
      if (v == nullptr || *v == '\0') return usage_error(std::string(arg) + " needs a file name");
      o->output = v;
    } else if (arg == "--duration") {
      const char* v = need_value();
      char* end = nullptr;
      double d = v ? std::strtod(v, &end) : -1;
      if (v == nullptr || *v == '\0' || *end != '\0' || !(d > 0))
        return usage_error("--duration expects seconds > 0");
      o->duration_s = d;
    } else if (!arg.empty() && arg[0] == '-') {
      return usage_error("unknown option '" + std::string(arg) + "'");
    } else if (have_pid) {
      return usage_error("more than one process id");
    } else if (!parse_pid(arg, &o->pid)) {
      return usage_error("'" + std::string(arg) + "' is not a process id");
    } else {
      have_pid = true;
    }
  }
  if (!have_pid) return usage_error("no process id");
  return -1;
}

std::string comm_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/comm");
  std::string name;
  std::getline(in, name);
  return name;
}

std::string self_directory() {
  char self[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return ".";
  self[n] = '\0';
  std::string path = self;
  return path.substr(0, path.rfind('/'));
}

std::string absolute(const std::string& path) {
  if (!path.empty() && path[0] == '/') return path;
  char cwd[PATH_MAX];
  if (getcwd(cwd, sizeof cwd) == nullptr) return path;
  return std::string(cwd) + "/" + path;
}

// Waits for SIGINT/SIGTERM/SIGHUP (blocked by the caller), the deadline or
// the process's exit. True when memtrail should detach (the process lives).
bool wait_for_detach(pid_t pid, double duration_s) {
  sigset_t set;
  sigemptyset(&set);
  for (int s : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&set, s);
  auto start = std::chrono::steady_clock::now();
  while (process_alive(pid)) {
    timespec tick{0, 100'000'000};
    if (sigtimedwait(&set, nullptr, &tick) > 0) return true;
    std::chrono::duration<double> spent = std::chrono::steady_clock::now() - start;
    if (duration_s > 0 && spent.count() >= duration_s) return true;
  }
  return false;
}

}  // namespace

int cmd_attach(int argc, char** argv) {
  AttachOptions o;
  if (int rc = parse(argc, argv, &o); rc >= 0) return rc;
  if (std::string why = attach_refusal(o.pid); !why.empty()) return refuse(why);
  std::string gdb = find_gdb();
  if (gdb.empty())
    return refuse("gdb is not installed; it injects the tracer (apt-get install gdb)");
  std::string library = self_directory() + "/../lib/libmemtrail_preload.so";
  if (access(library.c_str(), R_OK) != 0)
    return refuse("tracer library " + library + " is missing");
  std::string program = comm_of(o.pid);
  std::string output = absolute(
      o.output.empty() ? "memtrail." + program + "." + std::to_string(o.pid) + ".mtr" : o.output);
  if (access(output.c_str(), F_OK) == 0) return refuse(output + " exists; choose another -o");
  std::string lib_literal, out_literal;
  if (!gdb_string_literal(library, &lib_literal) || !gdb_string_literal(output, &out_literal))
    return refuse("paths with quotes, backslashes or control characters cannot be passed to gdb");

  // From here a signal must not leave the process half attached: it is
  // taken by wait_for_detach() once the tracer runs.
  sigset_t block;
  sigemptyset(&block);
  for (int s : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&block, s);
  sigprocmask(SIG_BLOCK, &block, nullptr);

  GdbResult r = run_gdb_calls(gdb, o.pid,
                              {{"setenv", "(long)(int)setenv(\"MEMTRAIL_ATTACH\", \"1\", 1)"},
                               {"dlopen", "(long)(void*)dlopen(" + lib_literal + ", 2)"},
                               {"start", "(long)(int)memtrail_attach_start(" + out_literal + ")"}},
                              kGdbTimeoutS);
  if (!r.values.count("dlopen") || r.values["dlopen"] == 0)
    return refuse("gdb could not load the tracer into process " + std::to_string(o.pid) +
                  (r.error.empty() ? "" : ": " + r.error));
  if (!r.values.count("start"))
    return refuse("gdb could not start the tracer" + (r.error.empty() ? "" : ": " + r.error));
  switch (r.values["start"]) {
    case 0:
      break;
    case 1:
      return refuse("process " + std::to_string(o.pid) + " cannot create " + output);
    case 3:
      return refuse("process " + std::to_string(o.pid) + " is already traced by memtrail");
    default:
      return refuse("the tracer found no allocation functions to hook in process " +
                    std::to_string(o.pid));
  }
  std::fprintf(stderr, "memtrail: attached to process %d (%s), tracing into %s; Ctrl-C detaches\n",
               o.pid, program.c_str(), output.c_str());
  if (!wait_for_detach(o.pid, o.duration_s)) {
    std::fprintf(stderr, "memtrail: process %d exited; trace %s\n", o.pid, output.c_str());
    return 0;
  }
  GdbResult stop =
      run_gdb_calls(gdb, o.pid, {{"stop", "(long)(int)memtrail_attach_stop()"}}, kGdbTimeoutS);
  if (!stop.values.count("stop")) {
    if (!process_alive(o.pid)) {
      std::fprintf(stderr, "memtrail: process %d exited; trace %s\n", o.pid, output.c_str());
      return 0;
    }
    return refuse("gdb could not detach the tracer (it keeps tracing until the process exits)" +
                  (stop.error.empty() ? "" : ": " + stop.error));
  }
  std::fprintf(stderr, "memtrail: detached from process %d, which keeps running; trace %s\n", o.pid,
               output.c_str());
  return 0;
}

}  // namespace memtrail::cli
