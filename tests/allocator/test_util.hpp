// Helpers for the allocator tests: a temporary directory for input files,
// and (run_command.hpp) running a command.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "run_command.hpp"

namespace memtrail::test {

struct TempDir {
  std::string path;
  TempDir() {
    // The pid in the name tells the suite's /tmp check (tests/tmp_litter)
    // whose directory this is while the test runs.
    std::string tmpl = "/tmp/memtrail-alloc-" + std::to_string(getpid()) + "-XXXXXX";
    path = mkdtemp(tmpl.data());
  }
  ~TempDir() { std::system(("rm -rf '" + path + "'").c_str()); }
  std::string file(const std::string& name, const std::string& content) const {
    std::string p = path + "/" + name;
    std::ofstream(p) << content;
    return p;
  }
};

}  // namespace memtrail::test
