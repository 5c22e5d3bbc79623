// PLACEHOLDER: replaced by the work that implements 'memtrail check'.
#include <cstdio>

#include "commands.hpp"

namespace memtrail::cli {
int cmd_check(int, char**) {
  std::fprintf(stderr, "memtrail check: not implemented yet\n");
  return 2;
}
}  // namespace memtrail::cli
