// memtrail run: runs a program under the LD_PRELOAD heap tracer.
//
//   memtrail run [-o FILE] [--depth N] [--no-stacks] [--sample-ms N] [--no-follow]
//                [--cuda] [--quiet] [--] PROGRAM ARGS...
//
// It only prepares the environment (LD_PRELOAD and MEMTRAIL_* variables that
// libmemtrail_preload.so reads in its constructor), runs the program, waits,
// says where the run went and exits with the program's exit code (128 +
// signal number if the program died from a signal). All tracing happens in
// the program's own process: every process image writes its own file into
// the run directory (run_output.hpp, tracer/src/run_naming.cpp).
#include <limits.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "commands.hpp"
#include "process_events.hpp"
#include "run_asan.hpp"
#include "run_cuda.hpp"
#include "run_output.hpp"
#include "run_signals.hpp"
#include "untraced_watch.hpp"

namespace memtrail::cli {
namespace {

constexpr const char* kPreloadName = "libmemtrail_preload.so";
constexpr const char* kPythonDirectory = "memtrail/python";  // the `memtrail` module
constexpr const char* kCuptiName = "libmemtrail_cupti.so";
constexpr int kMaxStackDepth = 256;

struct RunOptions {
  std::string output;  // the run directory; empty: memtrail.<program>.<pid of memtrail run>
  int depth = 64;
  bool stacks = true;
  int sample_ms = 10;
  bool follow = true;
  bool quiet = false;          // no line saying where the trace went
  bool cuda = false;           // trace CUDA memory (CUDA_INJECTION64_PATH)
  std::vector<char*> program;  // argv of the program, null-terminated
};

void print_usage(std::FILE* out) {
  std::fprintf(out,
               "usage: memtrail run [OPTIONS] [--] PROGRAM [ARGS...]\n"
               "\n"
               "Runs PROGRAM with the heap tracer preloaded and writes a run directory:\n"
               "one .mtr trace per process (PID.SEQ.PROGRAM.mtr) and index.tsv.\n"
               "\n"
               "  -o, --output DIR    run directory; %%p = pid of memtrail run, %%h = host\n"
               "                      (default memtrail.PROGRAM.PID)\n"
               "  --depth N           frames kept per stack, 1..%d (default 64)\n"
               "  --no-stacks         record no call stacks (faster, no call sites)\n"
               "  --sample-ms N       RSS/heap sample interval in ms, 0 = off (default 10)\n"
               "  --no-follow         do not trace child processes\n"
               "  --cuda              also trace CUDA device, pinned and managed memory\n"
               "                      (CUPTI, through CUDA_INJECTION64_PATH)\n"
               "  -q, --quiet         do not say where the trace went\n"
               "\n"
               "Exits with PROGRAM's exit code; if PROGRAM was killed by a signal, dies of\n"
               "the same signal (a shell shows 128 + signal). SIGHUP, SIGINT, SIGQUIT,\n"
               "SIGTERM, SIGUSR1 and SIGUSR2 sent to memtrail run are passed on to PROGRAM.\n",
               kMaxStackDepth);
}

// One-line usage error, exit code 2.
int usage_error(const std::string& message) {
  std::fprintf(stderr, "memtrail run: %s (try 'memtrail run --help')\n", message.c_str());
  return 2;
}

bool parse_int(std::string_view text, int low, int high, int* out) {
  if (text.empty() || text.size() > 9) return false;
  int value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + (c - '0');
  }
  if (value < low || value > high) return false;
  *out = value;
  return true;
}

// Parses argv (argv[0] is "run"). Returns -1 on success, else the exit code.
int parse_arguments(int argc, char** argv, RunOptions* options) {
  int i = 1;
  for (; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--") {
      ++i;
      break;
    }
    if (arg.empty() || arg[0] != '-') break;  // the program
    // Accepts "--flag VALUE" and "--flag=VALUE" (and "-o VALUE").
    auto value_of = [&](std::string_view flag, std::string* value) -> int {
      if (arg.size() > flag.size() && arg.substr(0, flag.size()) == flag &&
          arg[flag.size()] == '=') {
        *value = std::string(arg.substr(flag.size() + 1));
        return 1;
      }
      if (arg != flag) return 0;
      if (i + 1 >= argc) return -1;
      *value = argv[++i];
      return 1;
    };
    std::string value;
    int got;
    if (arg == "-h" || arg == "--help") {
      print_usage(stdout);
      return 0;
    } else if (arg == "--no-stacks") {
      options->stacks = false;
    } else if (arg == "--no-follow") {
      options->follow = false;
    } else if (arg == "--cuda") {
      options->cuda = true;
    } else if (arg == "-q" || arg == "--quiet") {
      options->quiet = true;
    } else if ((got = value_of("-o", &value)) != 0 || (got = value_of("--output", &value)) != 0) {
      if (got < 0) return usage_error(std::string(arg) + " needs a directory name");
      if (value.empty()) return usage_error("the output name is empty");
      options->output = value;
    } else if ((got = value_of("--depth", &value)) != 0) {
      if (got < 0) return usage_error("--depth needs a value");
      if (!parse_int(value, 1, kMaxStackDepth, &options->depth))
        return usage_error("--depth expects an integer from 1 to " +
                           std::to_string(kMaxStackDepth) + ", got '" + value + "'");
    } else if ((got = value_of("--sample-ms", &value)) != 0) {
      if (got < 0) return usage_error("--sample-ms needs a value");
      if (!parse_int(value, 0, 3600000, &options->sample_ms))
        return usage_error("--sample-ms expects milliseconds from 0 to 3600000, got '" + value +
                           "'");
    } else {
      return usage_error("unknown option '" + std::string(arg) + "'");
    }
  }
  if (i >= argc) return usage_error("no program to run");
  options->program.assign(argv + i, argv + argc);
  options->program.push_back(nullptr);
  return -1;
}

std::string directory_of(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

std::string base_name(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// <dir of this binary>/../lib/NAME (libmemtrail_preload.so, ...): the build
// tree and the install tree share the bin/ + lib/ layout.
std::string library_path(const char* name) {
  char self[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return std::string("../lib/") + name;
  self[n] = '\0';
  return directory_of(self) + "/../lib/" + name;
}

bool is_executable_file(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
}

// The PATH search execvp will do, done up front so that a missing program is
// a usage error (exit 2) rather than a child exiting 127.
bool program_exists(const std::string& name) {
  if (name.find('/') != std::string::npos) return is_executable_file(name);
  const char* path = std::getenv("PATH");
  std::string_view dirs = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  while (true) {
    auto colon = dirs.find(':');
    std::string dir(dirs.substr(0, colon));
    if (is_executable_file((dir.empty() ? "." : dir) + "/" + name)) return true;
    if (colon == std::string_view::npos) return false;
    dirs.remove_prefix(colon + 1);
  }
}

// Same expansion as the recorder: %p = pid, %h = host name, %% = %.
std::string expand_output(const std::string& pattern, pid_t pid) {
  std::string out;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%' || i + 1 == pattern.size()) {
      out += pattern[i];
      continue;
    }
    char c = pattern[++i];
    if (c == 'p') {
      out += std::to_string(pid);
    } else if (c == 'h') {
      char host[256] = {};
      gethostname(host, sizeof host - 1);
      out += host;
    } else if (c == '%') {
      out += '%';
    } else {
      out += '%';
      out += c;
    }
  }
  return out;
}

std::string absolute(const std::string& path) {
  if (!path.empty() && path[0] == '/') return path;
  char cwd[PATH_MAX];
  if (getcwd(cwd, sizeof cwd) == nullptr) return path;
  return std::string(cwd) + "/" + path;
}

// The environment the program (and every image after it) inherits: the
// preload library and the MEMTRAIL_* variables it reads in its constructor.
void set_tracing_environment(const RunOptions& options, const std::string& preload,
                             const std::string& output_absolute) {
  const char* old_preload = std::getenv("LD_PRELOAD");
  std::string ld_preload = preload;
  if (old_preload != nullptr && *old_preload != '\0') ld_preload += std::string(":") + old_preload;
  setenv("LD_PRELOAD", ld_preload.c_str(), 1);
  // A trailing '/' makes the recorder name each image's file in the run.
  setenv("MEMTRAIL_OUTPUT", (output_absolute + "/").c_str(), 1);
  setenv("MEMTRAIL_STACKS", options.stacks ? "1" : "0", 1);
  setenv("MEMTRAIL_STACK_DEPTH", std::to_string(options.depth).c_str(), 1);
  setenv("MEMTRAIL_SAMPLE_MS", std::to_string(options.sample_ms).c_str(), 1);
  setenv("MEMTRAIL_FOLLOW", options.follow ? "1" : "0", 1);
  // `import memtrail` finds the Python module (after the user's own path).
  if (char resolved[PATH_MAX]; realpath(library_path(kPythonDirectory).c_str(), resolved)) {
    std::string python = resolved;
    const char* old_path = std::getenv("PYTHONPATH");
    std::string path =
        old_path != nullptr && *old_path != '\0' ? old_path + (":" + python) : python;
    setenv("PYTHONPATH", path.c_str(), 1);
  }
  // The preload library starts the recorder itself, with live-heap tracking
  // and its pools registered first; libmemtrail.so must not start earlier.
  setenv("MEMTRAIL_AUTOSTART", "0", 1);
}

// Where run could not listen to process events and the program made child
// processes: what the walking watch may have let through.
void say_watch_was_walking(const std::string& why) {
  std::fprintf(stderr,
               "memtrail run: child processes were watched by walking /proc every 2 ms (no "
               "process events: %s): an image exec'd without the tracer by a raw system call "
               "that ended sooner, or after its parent, may have escaped unsaid\n",
               why.c_str());
}

}  // namespace

int cmd_run(int argc, char** argv) {
  // `run -p PID ...` is `attach PID ...` (heaptrack's spelling).
  if (argc >= 3 && (std::string_view(argv[1]) == "-p" || std::string_view(argv[1]) == "--pid")) {
    std::vector<char*> args = {argv[0], argv[2]};
    args.insert(args.end(), argv + 3, argv + argc);
    return cmd_attach(static_cast<int>(args.size()), args.data());
  }
  RunOptions options;
  if (int rc = parse_arguments(argc, argv, &options); rc >= 0) return rc;

  std::string program = options.program[0];
  if (!program_exists(program)) {
    return usage_error(program.find('/') != std::string::npos
                           ? "program '" + program + "' does not exist or is not executable"
                           : "program '" + program + "' not found in PATH");
  }
  if (std::string refusal = asan_refusal(program); !refusal.empty()) {
    std::fprintf(stderr, "memtrail run: %s\n", refusal.c_str());
    return 2;
  }
  std::string preload = library_path(kPreloadName);
  if (access(preload.c_str(), R_OK) != 0) {
    std::fprintf(stderr, "memtrail run: preload library %s is missing (%s)\n", preload.c_str(),
                 std::strerror(errno));
    return 2;
  }

  if (std::string error;
      options.cuda && !prepare_cuda_injection(library_path(kCuptiName), &error)) {
    std::fprintf(stderr, "memtrail run: %s\n", error.c_str());
    return 2;
  }

  std::string output = expand_output(
      options.output.empty() ? "memtrail." + base_name(program) + ".%p" : options.output, getpid());
  while (output.size() > 1 && output.back() == '/') output.pop_back();
  // Children may chdir; an absolute path keeps every trace where the user
  // asked for it.
  std::string output_absolute = absolute(output);
  int run_lock = prepare_run_directory(output_absolute);
  if (run_lock < 0) return 2;

  set_tracing_environment(options, preload, output_absolute);

  // Listening starts before the fork: the program's first events are in.
  std::optional<ProcessEvents> events;
  std::string no_events_why = "turned off by MEMTRAIL_RUN_PROCESS_EVENTS=0";
  if (options.follow && !process_events_disabled()) events = ProcessEvents::listen(&no_events_why);
  unsetenv("MEMTRAIL_RUN_PROCESS_EVENTS");  // run's own switch, not the tracer's

  std::fflush(nullptr);
  block_forwarded_signals();
  pid_t child = fork();
  if (child < 0) {
    std::fprintf(stderr, "memtrail run: fork failed: %s\n", std::strerror(errno));
    return 2;
  }
  if (child == 0) {
    restore_signal_mask();
    execvp(options.program[0], options.program.data());
    std::fprintf(stderr, "memtrail run: cannot execute '%s': %s\n", options.program[0],
                 std::strerror(errno));
    _exit(127);
  }

  // Images started where no interposer sees them (untraced_watch.hpp; not
  // --no-follow's, untraced on purpose). The forwarded signals still blocked.
  std::optional<UntracedWatch> watch;
  if (options.follow) watch.emplace(child, std::move(events), output_absolute);
  // Signals sent to memtrail run go on to the program (run_signals.hpp);
  // we stay alive to report how it ended.
  forward_signals_to(child);
  int status = 0;
  if (!wait_for_program(child, &status)) return 2;
  if (watch) {
    add_to_run_list(output_absolute, watch->stop());
    if (!watch->listens() && watch->walked_descendants()) say_watch_was_walking(no_events_why);
  }

  // --quiet: the caller (memtrail check --run) names the run if it keeps it.
  bool none_missing = finish_run_directory(output_absolute, output, child, status, options.quiet);
  close(run_lock);
  // A process's trace that could not be created fails a run the program
  // passed (exit 2, as memtrail's own errors); a failing program's status
  // stays its own.
  if (!none_missing && WIFEXITED(status) && WEXITSTATUS(status) == 0) return 2;
  return exit_like_program(status);
}

}  // namespace memtrail::cli
