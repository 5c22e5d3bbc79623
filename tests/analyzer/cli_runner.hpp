// Runs the real `memtrail` binary (MEMTRAIL_BIN) through the shell and
// captures exit code, stdout and stderr, for the CLI tests.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace memtrail::test {

struct CliResult {
  int exit_code = -1;
  std::string out, err;
  // Lines of stderr (a trailing newline does not start a new line).
  int err_lines() const {
    int n = 0;
    for (char c : err) n += c == '\n';
    if (!err.empty() && err.back() != '\n') ++n;
    return n;
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

// `args` is appended verbatim (quote paths with shell_quote).
inline CliResult run_shell(const std::string& command) {
  static int counter = 0;
  std::string base =
      "/tmp/memtrail-cli-" + std::to_string(getpid()) + "-" + std::to_string(counter++);
  std::string cmd = command + " >" + base + ".out 2>" + base + ".err";
  int status = std::system(cmd.c_str());
  CliResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = slurp(base + ".out");
  r.err = slurp(base + ".err");
  std::remove((base + ".out").c_str());
  std::remove((base + ".err").c_str());
  return r;
}

inline CliResult memtrail(const std::string& args) {
  return run_shell(std::string(MEMTRAIL_BIN) + " " + args);
}

}  // namespace memtrail::test
