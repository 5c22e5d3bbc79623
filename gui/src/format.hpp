// How memtrail-gui writes numbers: sizes as the CLI does (format_size),
// times in the unit that fits, counts with thousands separators.
#pragma once

#include <QString>
#include <cstdint>

namespace memtrail::gui {

QString bytesText(std::uint64_t bytes);  // "9.00 KiB", "512 B"
QString countText(std::uint64_t n);      // "1,234,567"
QString durationText(std::uint64_t ns);  // "850 ns", "12.5 us", "3.20 ms", "1.234 s"
QString bytesAndBlocks(std::uint64_t bytes, std::uint64_t blocks);  // "8.59 KiB in 13 blocks"

}  // namespace memtrail::gui
