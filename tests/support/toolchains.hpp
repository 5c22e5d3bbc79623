// Other languages' toolchains, for the tests that build a program at test
// time: whether a tool is installed (the test skips naming the Debian
// package when not), and a Go build that stays inside the test's directory.
//
//   if (!have_tool("go")) GTEST_SKIP() << "go not installed (Debian package golang-go)";
//   auto build = go_build_offline(dir.path(), source, dir / "program");
//   ASSERT_EQ(build.exit_code, 0) << build.err;
#pragma once

#include <string>

#include "run_command.hpp"

namespace memtrail::test {

inline bool have_tool(const std::string& tool) {
  return run_command("command -v " + tool).exit_code == 0;
}

// `go build -o output source` with cgo on, offline (no module lookups), its
// HOME, build cache and GOPATH under `dir`. Go leaves its module cache
// read-only: it is made writable again so that `dir` can be removed.
inline CommandResult go_build_offline(const std::string& dir, const std::string& source,
                                      const std::string& output) {
  const std::string env = "HOME=" + shell_quote(dir) + " GOCACHE=" + shell_quote(dir + "/cache") +
                          " GOPATH=" + shell_quote(dir + "/gopath") +
                          " GO111MODULE=off GOFLAGS= GOPROXY=off CGO_ENABLED=1 ";
  CommandResult build =
      run_command(env + "go build -o " + shell_quote(output) + " " + shell_quote(source));
  run_command("chmod -R u+w " + shell_quote(dir));
  return build;
}

}  // namespace memtrail::test
