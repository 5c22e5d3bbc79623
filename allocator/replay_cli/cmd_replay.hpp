// The replay command (cmd_replay.cpp). `memtrail replay ARGS` execs
// memtrail-replay with ARGS, so argv[0] is the binary and ARGS follow, as for
// the subcommands of `memtrail` (analyzer/cli/commands.hpp).
// Exit codes: 0 success, 2 usage or input error.
#pragma once

namespace memtrail::cli {

int cmd_replay(int argc, char** argv);

}  // namespace memtrail::cli
