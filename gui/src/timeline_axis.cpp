#include "timeline_axis.hpp"

#include <algorithm>
#include <cmath>

namespace memtrail::gui {
namespace {

const char* const kByteUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};

struct TimeUnit {
  double ns;
  const char* name;
};
const TimeUnit kTimeUnits[] = {{1, "ns"}, {1e3, "µs"}, {1e6, "ms"}, {1e9, "s"}};

// The value with `decimals` digits after the point, trailing zeros cut.
QString trimmed_number(double value, int decimals) {
  QString s = QString::number(value, 'f', std::max(0, decimals));
  if (s.contains('.')) {
    while (s.endsWith('0')) s.chop(1);
    if (s.endsWith('.')) s.chop(1);
  }
  return s;
}

// Decimals that show three significant digits of a value >= 1.
int decimals_for(double value) {
  return value >= 100 ? 0 : value >= 10 ? 1 : 2;
}

// Decimals a multiple of `step` needs to be told apart from its neighbours.
int decimals_for_step(double step) {
  return step >= 1 ? 0 : static_cast<int>(std::ceil(-std::log10(step) - 1e-9));
}

const TimeUnit& time_unit_for(double ns) {
  const TimeUnit* unit = &kTimeUnits[0];
  for (const auto& u : kTimeUnits)
    if (ns >= u.ns) unit = &u;
  return *unit;
}

}  // namespace

double nice_step(double raw) {
  if (!(raw > 0)) return 1;
  double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * magnitude >= raw * (1 - 1e-12)) return m * magnitude;
  return 10 * magnitude;
}

std::vector<Tick> byte_ticks(std::uint64_t max_bytes, int max_ticks) {
  std::vector<Tick> ticks;
  if (max_bytes == 0 || max_ticks < 1) return ticks;
  int unit = 0;
  while (unit < 4 && static_cast<double>(max_bytes) >= 1024.0 * std::pow(1024.0, unit)) ++unit;
  const double scale = std::pow(1024.0, unit);
  double step = nice_step(static_cast<double>(max_bytes) / scale / max_ticks);
  if (unit == 0) step = std::max(step, 1.0);
  for (double v = 0; v * scale <= static_cast<double>(max_bytes) * (1 + 1e-12); v += step)
    ticks.push_back({static_cast<std::uint64_t>(std::llround(v * scale)),
                     trimmed_number(v, decimals_for_step(step)) + " " + kByteUnits[unit]});
  return ticks;
}

std::vector<Tick> time_ticks(std::uint64_t t0, std::uint64_t t1, int max_ticks) {
  std::vector<Tick> ticks;
  if (t1 <= t0 || max_ticks < 1) return ticks;
  const double step = std::max(1.0, nice_step(static_cast<double>(t1 - t0) / max_ticks));
  // The unit of the span, not of the step: 0.5 s steps read "1.5 s", not "1500 ms".
  const TimeUnit& unit = time_unit_for(static_cast<double>(t1 - t0));
  const int decimals = decimals_for_step(step / unit.ns);
  for (double v = std::ceil(static_cast<double>(t0) / step) * step; v <= static_cast<double>(t1);
       v += step) {
    ticks.push_back({static_cast<std::uint64_t>(std::llround(v)),
                     trimmed_number(v / unit.ns, decimals) + " " + unit.name});
  }
  return ticks;
}

QString format_time(std::uint64_t ns) {
  const TimeUnit& unit = time_unit_for(static_cast<double>(ns));
  double value = static_cast<double>(ns) / unit.ns;
  return trimmed_number(value, unit.ns == 1 ? 0 : decimals_for(value)) + " " + unit.name;
}

QString format_moment(std::uint64_t ns) {
  const TimeUnit& unit = time_unit_for(static_cast<double>(ns));
  const int decimals = unit.ns == 1 ? 0 : unit.ns == 1e9 ? 6 : 3;
  return trimmed_number(static_cast<double>(ns) / unit.ns, decimals) + " " + unit.name;
}

QString format_bytes(std::uint64_t bytes) {
  int unit = 0;
  double value = static_cast<double>(bytes);
  while (unit < 4 && value >= 1024) {
    value /= 1024;
    ++unit;
  }
  return trimmed_number(value, unit == 0 ? 0 : decimals_for(value)) + " " + kByteUnits[unit];
}

}  // namespace memtrail::gui
