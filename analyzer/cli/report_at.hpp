// memtrail report TRACE --at TIME: reserved/used per pool and the segment
// map's summary at one moment, through the analyzer Session.
#pragma once

#include <cstdint>
#include <string>

#include "memtrail/analysis.hpp"

namespace memtrail::cli {

int report_at(const std::string& trace, const AnalysisOptions& options, std::uint64_t at_ns,
              bool json);

}  // namespace memtrail::cli
