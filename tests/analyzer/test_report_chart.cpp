// The text report's memory-over-time charts (report_chart.hpp).
#include <gtest/gtest.h>

#include <cstdio>

#include "memtrail/report_chart.hpp"
#include "memtrail/report_text.hpp"
#include "trace_builder.hpp"

namespace memtrail {
namespace {

TEST(ReportChart, UsedUnderReservedAsSteps) {
  Series used{{0, 10, 20, 30}, {0, 100, 200, 100}};
  Series reserved{{0, 10, 20, 30}, {200, 200, 200, 200}};
  EXPECT_EQ(format_chart("T", used, reserved, 0, 40, {4, 2}),
            "  T, peak 200 B\n"
            "  200 B |::#:\n"
            "        |:###\n"
            "      0 +----> 40 ns\n");
}

// A column without a point of its own carries the value from its left.
TEST(ReportChart, EmptyColumnsCarryTheLastValue) {
  Series used{{0, 30}, {100, 0}};
  EXPECT_EQ(format_chart("U", used, {}, 0, 40, {4, 1}),
            "  U, peak 100 B\n"
            "  100 B |###\n"
            "      0 +----> 40 ns\n");
  EXPECT_EQ(format_chart("Z", Series{{0}, {0}}, {}, 0, 40, {4, 1}), "");
}

TEST(ReportChart, TextReportDrawsEachPoolAndRss) {
  test::TraceBuilder b(test::temp_trace("chart.mtr"));
  b.pool(1, "malloc", PoolKind::heap);
  b.alloc(0, 1, 0x1000, 4096);
  b.free(50, 1, 0x1000);
  b.sample(60, 8 << 20, 1000, 0);  // heap_reserved 0: not glibc's heap
  AnalysisOptions o;
  o.symbol_cache = false;
  Analysis a = analyze(b.finish(), o);
  ASSERT_TRUE(a.error.empty()) << a.error;
  std::string text = report_text(a);
  EXPECT_NE(text.find("\nMEMORY OVER TIME\n  pool malloc: used (#), peak 4.00 KiB\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\n  process RSS (#), peak 8.00 MiB\n"), std::string::npos) << text;
  std::remove(b.path().c_str());
}

}  // namespace
}  // namespace memtrail
