// Runs the real `memtrail` binary (MEMTRAIL_BIN) for the CLI tests.
#pragma once

#include <string>

#include "run_command.hpp"

namespace memtrail::test {

inline CommandResult memtrail(const std::string& args) {
  return run_command(std::string(MEMTRAIL_BIN) + " " + args);
}

}  // namespace memtrail::test
