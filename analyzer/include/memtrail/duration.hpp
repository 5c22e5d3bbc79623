// Time strings, one syntax for the CLI's --from/--to and memtrail-gui's
// --range: "1500" (ns), "250ns", "10us", "1.5ms", "2s".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace memtrail {

// nullopt + one-line error ("'5x': unknown unit (use ns, us, ms or s)") on
// an empty, malformed, negative or too large time.
std::optional<std::uint64_t> parse_duration_ns(std::string_view text, std::string* error);

}  // namespace memtrail
