// Axis arithmetic of memtrail-gui's charts: "nice" tick steps and the labels
// of the byte axis (binary units) and the time axis (trace time since start).
// Pure functions, so the tests can check what an axis will show.
#pragma once

#include <QString>
#include <cstdint>
#include <vector>

namespace memtrail::gui {

struct Tick {
  std::uint64_t value = 0;
  QString label;
};

// Ticks 0, step, 2*step, ... <= max_bytes with step = 1, 2 or 5 x 10^n of the
// binary unit (B, KiB, MiB, GiB, TiB) that reads best; at most ~max_ticks.
std::vector<Tick> byte_ticks(std::uint64_t max_bytes, int max_ticks);

// Ticks at multiples of a 1-2-5 step in [t0, t1] (ns), labelled in the unit of
// the step (ns, µs, ms, s) with as many decimals as the step needs.
std::vector<Tick> time_ticks(std::uint64_t t0, std::uint64_t t1, int max_ticks);

// "1.25 s", "300 ms", "12 µs", "800 ns": a duration or trace time for labels
// and tooltips (three significant digits).
QString format_time(std::uint64_t ns);
// A moment of the trace, finer than format_time: "14.021 ms", "1.250031 s"
// (three decimals in its unit, six in seconds; trailing zeros cut).
QString format_moment(std::uint64_t ns);
// "512 B", "1.5 KiB", "20 MiB" (three significant digits, trailing zeros cut).
QString format_bytes(std::uint64_t bytes);

// The 1, 2 or 5 x 10^n step >= raw (raw > 0).
double nice_step(double raw);

}  // namespace memtrail::gui
