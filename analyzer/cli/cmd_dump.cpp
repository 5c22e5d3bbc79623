// PLACEHOLDER: replaced by the work that implements 'memtrail dump'.
#include <cstdio>

#include "commands.hpp"

namespace memtrail::cli {
int cmd_dump(int, char**) {
  std::fprintf(stderr, "memtrail dump: not implemented yet\n");
  return 2;
}
}  // namespace memtrail::cli
