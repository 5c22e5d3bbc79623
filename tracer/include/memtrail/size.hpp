// Size strings, one syntax everywhere (CLI flags, env variables, config
// strings, gtest limits): "512", "64KiB", "64 KB", "8G", "1.5 GiB".
// Units are binary: K/KB/KiB = 1024, M = 1024^2, G, T, P likewise; B or no
// unit means bytes. Case-insensitive.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace memtrail {

// Returns nullopt and sets *error to a one-line reason ("'12 XB': unknown
// unit 'XB'") on a malformed, negative or overflowing size.
std::optional<std::uint64_t> parse_size(std::string_view text, std::string* error = nullptr);

// Human-readable size for reports: "512 B", "1.50 KiB", "20.00 MiB".
std::string format_size(std::uint64_t bytes);

// A count with its noun, singular for exactly one: "1 block", "3 blocks",
// "0 whole chunks". `noun` is the singular and takes a plain "s" plural.
std::string count_text(std::uint64_t n, std::string_view noun);

}  // namespace memtrail
