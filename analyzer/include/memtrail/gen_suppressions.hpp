// `memtrail check --gen-suppressions`: a ready `leak:` rule for each leak site
// that made a check fail, in the syntax parse_suppressions() reads, so the
// printed text saved as a file and passed with --suppressions makes the same
// check pass.
#pragma once

#include <string>

#include "memtrail/analysis.hpp"
#include "memtrail/check.hpp"

namespace memtrail {

// The rule that names `frames`' site: `leak:^FUNCTION$` for the innermost
// frame with a function outside the allocation machinery (the malloc and
// operator new families, libc, libstdc++, ld.so), else
// `leak:^MODULE-FILE-NAME$` of the innermost such frame with a module, else
// the innermost frame's; empty when no frame is known (no stack recorded).
std::string suppression_for(const FrameList& frames);

// One commented rule per unsuppressed leak site of `config.leak_kinds` when
// `result` failed on leaks (leaked-bytes or leaked-blocks), rules repeated
// for several sites written once; "" when no leak limit failed.
std::string generate_suppressions(const Analysis& a, const CheckConfig& config,
                                  const SuppressionSet& suppressions, const CheckResult& result);

}  // namespace memtrail
