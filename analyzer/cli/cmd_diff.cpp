// PLACEHOLDER: replaced by the work that implements 'memtrail diff'.
#include <cstdio>

#include "commands.hpp"

namespace memtrail::cli {
int cmd_diff(int, char**) {
  std::fprintf(stderr, "memtrail diff: not implemented yet\n");
  return 2;
}
}  // namespace memtrail::cli
