// A temporary directory under $TMPDIR (else /tmp) for tests that run real
// programs, removed with everything in it when the test is done.
//
//   memtrail::test::TempDir dir("signals");   // $TMPDIR/memtrail-signals-test-XXXXXX
//   run_command("memtrail run -o " + shell_quote(dir / "t") + " -- true");
#pragma once

#include <stdlib.h>

#include <cstdlib>
#include <string>

#include "run_command.hpp"

namespace memtrail::test {

class TempDir {
 public:
  explicit TempDir(const std::string& what) {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern =
        std::string(tmp && *tmp ? tmp : "/tmp") + "/memtrail-" + what + "-test-XXXXXX";
    path_ = mkdtemp(pattern.data()) ? pattern : std::string();
  }
  ~TempDir() {
    if (!path_.empty()) run_command("rm -rf " + shell_quote(path_));
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }
  std::string operator/(const std::string& name) const { return file(name); }

 private:
  std::string path_;
};

}  // namespace memtrail::test
