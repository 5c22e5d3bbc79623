// PLACEHOLDER: replaced by the work that implements 'memtrail run'.
#include <cstdio>

#include "commands.hpp"

namespace memtrail::cli {
int cmd_run(int, char**) {
  std::fprintf(stderr, "memtrail run: not implemented yet\n");
  return 2;
}
}  // namespace memtrail::cli
