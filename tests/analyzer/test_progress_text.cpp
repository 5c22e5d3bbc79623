// The CLI's progress line: its text, and silence when stderr is no terminal.
#include <gtest/gtest.h>

#include "cli_runner.hpp"
#include "memtrail/progress_text.hpp"
#include "trace_builder.hpp"

namespace memtrail {
namespace {

TEST(ProgressText, SizesPercentAndEta) {
  // 3 MiB of 12 MiB in 2 s: 9 MiB left at 1.5 MiB/s.
  EXPECT_EQ(format_progress("report", 3 << 20, 12 << 20, 2.0),
            "memtrail report: 3.00 MiB of 12.00 MiB read (25%), ETA 6 s");
  EXPECT_EQ(format_progress("export", 1 << 20, 100 << 20, 1.25),
            "memtrail export: 1.00 MiB of 100.00 MiB read (1%), ETA 2 min 04 s");
  EXPECT_EQ(format_progress("diff", 0, 4096, 1.5), "memtrail diff: 0 B of 4.00 KiB read (0%)");
  EXPECT_EQ(format_progress("check", 5000, 4096, 3.0),
            "memtrail check: 4.00 KiB of 4.00 KiB read (100%), ETA 0 s");
}

// Not a terminal (the test captures stderr to a file): not a byte of
// progress, on a trace that takes over a second to read or not.
TEST(ProgressText, NothingWhenStderrIsNoTerminal) {
  test::TraceBuilder b(test::temp_trace("progress.mtr"));
  b.pool(1, "malloc", PoolKind::heap);
  for (std::uint64_t i = 0; i < 600000; ++i) {  // 1.2M events: the progress callback runs
    b.alloc(2 * i, 1, 0x1000, 16);
    b.free(2 * i + 1, 1, 0x1000);
  }
  const std::string& path = b.finish();
  for (const char* cmd : {"report ", "export --format folded "}) {
    auto r = test::memtrail(std::string(cmd) + "--no-symbols " + test::shell_quote(path));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.err, "") << cmd;
  }
  std::remove(path.c_str());
}

}  // namespace
}  // namespace memtrail
