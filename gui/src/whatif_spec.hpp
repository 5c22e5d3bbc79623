// The What-if view's choice of replay, as `--policy SPEC` writes it:
//   ALLOCATOR[;pool=NAME][;conf=STR][;capacity=SIZE][;mark=NAME]
// ALLOCATOR is caching, bfc, malloc or workspace, and the fields are those of
// `memtrail replay`: --pool, --conf (PYTORCH_CUDA_ALLOC_CONF syntax for
// caching, BfcOptions for bfc, ND4J's fields for workspace), --capacity and
// --iteration-mark (workspace only). ';' separates the fields because the
// conf strings use ',' and ':' and pool names may hold spaces.
// Plain C++, so --policy is checked before QApplication exists.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace memtrail::gui {

struct WhatIfSpec {
  std::string allocator = "caching";  // caching, bfc, malloc, workspace
  std::string pool;                   // empty: the view picks one
  std::string conf;
  std::uint64_t capacity = 0;  // 0: unbounded
  std::string mark;            // workspace: the iteration scope or mark
  bool operator==(const WhatIfSpec&) const = default;
};

// nullopt and a one-line *error naming the problem.
std::optional<WhatIfSpec> parse_what_if_spec(const std::string& text, std::string* error);
// The spec as parse_what_if_spec reads it back (empty fields left out).
std::string what_if_spec_text(const WhatIfSpec& spec);

}  // namespace memtrail::gui
