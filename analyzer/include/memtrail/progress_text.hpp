// The text of the CLI's progress line (analyzer/cli/progress_line.hpp).
#pragma once

#include <cstdint>
#include <string>

namespace memtrail {

// "memtrail CMD: DONE of TOTAL read (P%), ETA T": sizes as the report
// writes them, the ETA from the rate so far ("4 s", "2 min 05 s"); no ETA
// before the first byte.
std::string format_progress(const std::string& command, std::uint64_t done, std::uint64_t total,
                            double elapsed_s);

}  // namespace memtrail
