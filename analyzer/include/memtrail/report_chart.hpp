// Memory over time as a terminal chart, like valgrind's ms_print: one chart
// per pool (used '#', reserved ':' above it) and one of the process's RSS,
// in the text report's MEMORY OVER TIME section.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "memtrail/analysis.hpp"

namespace memtrail {

struct ChartSize {
  std::size_t width = 60;   // columns of time
  std::size_t height = 10;  // rows of bytes
};

// One chart: `used` drawn with '#', `reserved` (may be empty) with ':' where
// it exceeds used. Both are step functions over [from_ns, to_ns]: a column
// shows the maximum reached in its time slice, else the value carried from
// the left. Empty when both series are empty or all zero.
std::string format_chart(const std::string& title, const Series& used, const Series& reserved,
                         std::uint64_t from_ns, std::uint64_t to_ns, ChartSize size = {});

// The section: each analyzed pool that used memory, then RSS when sampled.
std::string memory_over_time_section(const Analysis& a, ChartSize size = {});

}  // namespace memtrail
