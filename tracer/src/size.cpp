#include "memtrail/size.hpp"

#include <cctype>
#include <cmath>
#include <cstdio>

namespace memtrail {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::optional<int> unit_power(std::string_view unit) {
  std::string u;
  for (char c : unit) u += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (u.empty() || u == "b") return 0;
  static constexpr std::string_view kPrefixes = "kmgtp";
  auto pos = kPrefixes.find(u[0]);
  if (pos == std::string_view::npos) return std::nullopt;
  std::string_view rest = std::string_view(u).substr(1);
  if (rest.empty() || rest == "b" || rest == "ib") return static_cast<int>(pos) + 1;
  return std::nullopt;
}

bool fail(std::string* error, std::string_view text, const std::string& why) {
  if (error) *error = "'" + std::string(text) + "': " + why;
  return false;
}

}  // namespace

std::optional<std::uint64_t> parse_size(std::string_view text, std::string* error) {
  std::string_view s = trim(text);
  std::size_t i = 0;
  bool seen_digit = false, seen_dot = false;
  while (i < s.size() &&
         (std::isdigit(static_cast<unsigned char>(s[i])) || (s[i] == '.' && !seen_dot))) {
    seen_dot |= s[i] == '.';
    seen_digit |= s[i] != '.';
    ++i;
  }
  if (!seen_digit) {
    fail(error, text, s.empty() ? "empty size" : "expected a number such as 512, 64KiB or 1.5 GiB");
    return std::nullopt;
  }
  std::string number(s.substr(0, i));
  auto power = unit_power(trim(s.substr(i)));
  if (!power) {
    fail(error, text,
         "unknown unit '" + std::string(trim(s.substr(i))) + "' (use B, KiB, MiB, GiB, TiB)");
    return std::nullopt;
  }
  long double value = std::strtold(number.c_str(), nullptr);
  for (int p = 0; p < *power; ++p) value *= 1024.0L;
  if (value >= 18446744073709551615.0L) {
    fail(error, text, "size does not fit in 64 bits");
    return std::nullopt;
  }
  return static_cast<std::uint64_t>(std::llroundl(std::floor(value)));
}

std::string format_size(std::uint64_t bytes) {
  static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
  if (bytes < 1024) return std::to_string(bytes) + " B";
  double v = static_cast<double>(bytes) / 1024.0;
  int u = 0;
  while (v >= 1024.0 && u < 4) {
    v /= 1024.0;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f %s", v, kUnits[u]);
  return buf;
}

std::string count_text(std::uint64_t n, std::string_view noun) {
  std::string text = std::to_string(n);
  text += ' ';
  text += noun;
  if (n != 1) text += 's';
  return text;
}

}  // namespace memtrail
