#include "format.hpp"

#include "memtrail/size.hpp"

namespace memtrail::gui {

QString bytesText(std::uint64_t bytes) {
  return QString::fromStdString(format_size(bytes));
}

QString countText(std::uint64_t n) {
  QString digits = QString::number(n);
  for (int i = digits.size() - 3; i > 0; i -= 3) digits.insert(i, QLatin1Char(','));
  return digits;
}

QString durationText(std::uint64_t ns) {
  const double v = static_cast<double>(ns);
  if (ns < 1000) return QStringLiteral("%1 ns").arg(ns);
  if (ns < 1000000) return QStringLiteral("%1 µs").arg(v / 1e3, 0, 'f', 1);
  if (ns < 1000000000) return QStringLiteral("%1 ms").arg(v / 1e6, 0, 'f', 2);
  return QStringLiteral("%1 s").arg(v / 1e9, 0, 'f', 3);
}

QString bytesAndBlocks(std::uint64_t bytes, std::uint64_t blocks) {
  return QStringLiteral("%1 in %2 %3")
      .arg(bytesText(bytes), countText(blocks), blocks == 1 ? "block" : "blocks");
}

}  // namespace memtrail::gui
