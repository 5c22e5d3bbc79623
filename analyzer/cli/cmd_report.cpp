// PLACEHOLDER: replaced by the work that implements 'memtrail report'.
#include <cstdio>

#include "commands.hpp"

namespace memtrail::cli {
int cmd_report(int, char**) {
  std::fprintf(stderr, "memtrail report: not implemented yet\n");
  return 2;
}
}  // namespace memtrail::cli
