// What `run`, `report` and `check` say of a run whose exec'd image could not
// write its trace: shared by the exec (lost_exec_test), spawn
// (lost_spawn_test) and shell (lost_shell_test) shapes of issue 26, item 9.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "run_command.hpp"

namespace memtrail::test {

// A launcher's run untraced and under `memtrail run -o RUN`: the launcher
// (`LAUNCHER HOW PROGRAM`) makes its child in the way HOW names.
struct Runs {
  CommandResult plain, traced;
};

inline Runs run_both(const std::string& memtrail, const std::string& run,
                     const std::string& launcher, const std::string& how,
                     const std::string& program) {
  const std::string command = launcher + " " + how + " " + shell_quote(program);
  return {run_command(command),
          run_command(memtrail + " run -o " + shell_quote(run) + " -- " + command)};
}

// `run`'s stderr names the missing trace of an exec of `program`.
inline bool says_missing_exec(const std::string& err, const std::string& program) {
  return err.find("missing: the trace of pid ") != std::string::npos &&
         err.find("after exec of " + program) != std::string::npos;
}

// report (text and JSON) and check of the run name the missing trace; check
// fails unless told to accept the loss.
inline void expect_report_and_check_say_missing(const std::string& memtrail, const std::string& run,
                                                const std::string& program) {
  auto text = run_command(memtrail + " report " + shell_quote(run));
  EXPECT_NE(text.out.find("MISSING TRACES"), std::string::npos) << text.out << text.err;
  EXPECT_NE(text.out.find("after exec of " + program), std::string::npos) << text.out;
  auto json = run_command(memtrail + " report --json " + shell_quote(run));
  auto doc = nlohmann::json::parse(json.out, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << json.out << json.err;
  ASSERT_EQ(doc["missing_traces"].size(), 1u) << json.out;
  EXPECT_NE(doc["missing_traces"][0].get<std::string>().find("after exec of " + program),
            std::string::npos);
  auto check = run_command(memtrail + " check --max-leaked 1GiB " + shell_quote(run));
  EXPECT_EQ(check.exit_code, 1) << check.out << check.err;
  EXPECT_NE(check.err.find("FAIL missing-traces: the trace of pid "), std::string::npos)
      << check.err;
  auto accepted =
      run_command(memtrail + " check --max-leaked 1GiB --accept-lost-events " + shell_quote(run));
  EXPECT_EQ(accepted.exit_code, 0) << accepted.out << accepted.err;
}

}  // namespace memtrail::test
