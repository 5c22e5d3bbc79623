// Runs a command through the shell for the tests that drive real binaries
// (memtrail CLI, traced samples, CMake): exit code, stdout and stderr.
//
//   auto r = memtrail::test::run_command(MEMTRAIL_BIN " report " + shell_quote(path));
//   EXPECT_EQ(r.exit_code, 2) << r.err;
//
// Output goes through temporary files rather than a pipe, so a child that
// fills stderr can never block on a full stdout pipe.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace memtrail::test {

struct CommandResult {
  int exit_code = -1;  // 128 + signal when the shell was killed
  std::string out, err;
  // Lines of stderr (a trailing newline does not start a new line).
  int err_lines() const {
    int n = 0;
    for (char c : err) n += c == '\n';
    if (!err.empty() && err.back() != '\n') ++n;
    return n;
  }
  std::vector<std::string> out_lines() const {
    std::vector<std::string> lines;
    std::istringstream in(out);
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    return lines;
  }
};

inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// `command` is shell text: quote paths with shell_quote.
inline CommandResult run_command(const std::string& command) {
  // Atomic: tests run commands from several threads at once (leak_load_test).
  static std::atomic<int> counter{0};
  const char* tmp = std::getenv("TMPDIR");
  std::string base = std::string(tmp && *tmp ? tmp : "/tmp") + "/memtrail-cmd-" +
                     std::to_string(getpid()) + "-" + std::to_string(counter++);
  int status = std::system((command + " >" + base + ".out 2>" + base + ".err").c_str());
  CommandResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = slurp(base + ".out");
  r.err = slurp(base + ".err");
  std::remove((base + ".out").c_str());
  std::remove((base + ".err").c_str());
  return r;
}

// stdout and stderr interleaved in `out`, as a user sees them on a terminal.
inline CommandResult run_merged(const std::string& command) {
  return run_command("{ { " + command + "; } 2>&1; }");
}

}  // namespace memtrail::test
