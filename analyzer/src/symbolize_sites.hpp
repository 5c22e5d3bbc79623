// Resolves the frames of every site of an Analysis (analyze() and the
// session's load): the symbol cache first (TRACE.symbols), then DWARF.
#pragma once

#include <cstddef>
#include <functional>

#include "memtrail/analysis.hpp"
#include "module_open.hpp"

namespace memtrail::detail {

// Fills Site::frames and Analysis::symbol_warnings. `progress`, when set, is
// called every few sites with the number done; false stops (returns false,
// the remaining sites keep no frames). `preopened`: modules the
// ModulePreloader already opened, used instead of opening them again.
bool symbolize_sites(Analysis& a, const AnalysisOptions& options,
                     const std::function<bool(std::size_t done)>& progress = {},
                     std::vector<OpenedModule> preopened = {});

// The frame of a recorded Python frame (kPythonFrameTag, event.hpp): its
// function, file and line from the trace's string table; module "python".
Frame python_frame(const Analysis& a, std::uint64_t ip);

// The module of `ip` (the latest loaded when mappings overlap), or null.
const ModuleInfo* module_of(const Analysis& a, std::uint64_t ip);

}  // namespace memtrail::detail
