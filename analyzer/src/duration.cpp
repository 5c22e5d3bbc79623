#include "memtrail/duration.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace memtrail {

std::optional<std::uint64_t> parse_duration_ns(std::string_view text, std::string* error) {
  auto fail = [&](const char* why) -> std::optional<std::uint64_t> {
    if (error) *error = "'" + std::string(text) + "': " + why;
    return std::nullopt;
  };
  std::string s(text);
  if (s.empty()) return fail("empty time");
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || errno == ERANGE || !std::isfinite(v)) return fail("not a time");
  if (v < 0) return fail("negative time");
  std::string unit(end);
  double scale;
  if (unit.empty() || unit == "ns")
    scale = 1;
  else if (unit == "us")
    scale = 1e3;
  else if (unit == "ms")
    scale = 1e6;
  else if (unit == "s")
    scale = 1e9;
  else
    return fail("unknown unit (use ns, us, ms or s)");
  double ns = v * scale;
  if (ns >= 1.8e19) return fail("too large");
  return static_cast<std::uint64_t>(std::llround(ns));
}

}  // namespace memtrail
