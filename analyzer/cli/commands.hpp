// Subcommands of the `memtrail` binary. Each takes the arguments after its
// name (argv[0] is the subcommand) and returns the process exit code.
// Exit codes: 0 success, 1 a check failed (check only), 2 usage or input error.
#pragma once

namespace memtrail::cli {

int cmd_run(int argc, char** argv);     // cmd_run.cpp
int cmd_report(int argc, char** argv);  // cmd_report.cpp
int cmd_check(int argc, char** argv);   // cmd_check.cpp
int cmd_diff(int argc, char** argv);    // cmd_diff.cpp
int cmd_export(int argc, char** argv);  // cmd_export.cpp
int cmd_replay(int argc, char** argv);  // replay_exec.cpp: execs memtrail-replay
int cmd_dump(int argc, char** argv);    // cmd_dump.cpp
int cmd_attach(int argc, char** argv);  // cmd_attach.cpp

}  // namespace memtrail::cli
