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

}  // namespace memtrail::test
