// The analysis the analyzer's tree tests compare with: the whole pass, no
// symbols (their traces are hand-built, their frames have no module), over
// an optional time range.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "memtrail/analysis.hpp"

namespace memtrail::test {

inline Analysis analyze_unsymbolized(const std::string& path, std::uint64_t from = 0,
                                     std::uint64_t to = kTimeMax) {
  AnalysisOptions o;
  o.symbolize = false;
  o.symbol_cache = false;
  o.from_ns = from;
  o.to_ns = to;
  Analysis a = analyze(path, o);
  EXPECT_TRUE(a.error.empty()) << a.error;
  return a;
}

}  // namespace memtrail::test
