// The progress line's text (progress_text.hpp).
#include "memtrail/progress_text.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

#include "memtrail/size.hpp"

namespace memtrail {

namespace {

std::string eta_text(double seconds) {
  auto s = static_cast<std::uint64_t>(seconds + 0.5);
  char buf[48];
  if (s < 60)
    std::snprintf(buf, sizeof buf, "%" PRIu64 " s", s);
  else
    std::snprintf(buf, sizeof buf, "%" PRIu64 " min %02" PRIu64 " s", s / 60, s % 60);
  return buf;
}

}  // namespace

std::string format_progress(const std::string& command, std::uint64_t done, std::uint64_t total,
                            double elapsed_s) {
  total = std::max<std::uint64_t>(total, 1);
  done = std::min(done, total);
  char pct[16];
  std::snprintf(pct, sizeof pct, "%" PRIu64 "%%", done * 100 / total);
  std::string line = "memtrail " + command + ": " + format_size(done) + " of " +
                     format_size(total) + " read (" + pct + ")";
  if (done > 0 && elapsed_s > 0)
    line += ", ETA " +
            eta_text(elapsed_s * static_cast<double>(total - done) / static_cast<double>(done));
  return line;
}

}  // namespace memtrail
