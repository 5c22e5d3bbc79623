// Helpers for the allocator tests: temporary files and running a command.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace memtrail::test {

struct TempDir {
  std::string path;
  TempDir() {
    char tmpl[] = "/tmp/memtrail-alloc-XXXXXX";
    path = mkdtemp(tmpl);
  }
  ~TempDir() { std::system(("rm -rf '" + path + "'").c_str()); }
  std::string file(const std::string& name, const std::string& content) const {
    std::string p = path + "/" + name;
    std::ofstream(p) << content;
    return p;
  }
};

struct RunResult {
  int exit_code = -1;
  std::string out, err;
  std::vector<std::string> out_lines() const {
    std::vector<std::string> lines;
    std::istringstream in(out);
    std::string l;
    while (std::getline(in, l)) lines.push_back(l);
    return lines;
  }
};

inline std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Runs `command` through the shell, capturing stdout and stderr.
inline RunResult run(const std::string& command, const TempDir& dir) {
  const std::string out = dir.path + "/stdout", err = dir.path + "/stderr";
  int status = std::system((command + " >'" + out + "' 2>'" + err + "'").c_str());
  RunResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

inline std::string quote(const std::string& s) {
  return "'" + s + "'";
}

}  // namespace memtrail::test
