// PLACEHOLDER: replaced by the work that implements 'memtrail export'.
#include <cstdio>

#include "commands.hpp"

namespace memtrail::cli {
int cmd_export(int, char**) {
  std::fprintf(stderr, "memtrail export: not implemented yet\n");
  return 2;
}
}  // namespace memtrail::cli
