// What the active recording session is: whether there is one, its file and
// its clock. Not installed.
#pragma once

#include <cstdint>
#include <string>

namespace memtrail::detail {

// True once start() succeeded and until stop().
bool recorder_started() noexcept;

// The file the active session writes ("%p" expanded); empty when not tracing.
std::string trace_path();

// Now, in trace time (ns since the trace started); 0 when not tracing.
std::uint64_t trace_time_ns() noexcept;

}  // namespace memtrail::detail
