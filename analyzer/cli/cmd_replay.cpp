// PLACEHOLDER: replaced by the work that implements 'memtrail replay'.
#include <cstdio>

#include "commands.hpp"

namespace memtrail::cli {
int cmd_replay(int, char**) {
  std::fprintf(stderr, "memtrail replay: not implemented yet\n");
  return 2;
}
}  // namespace memtrail::cli
