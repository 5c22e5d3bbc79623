// A Qt Charts pie of reserved bytes split into used / cached free /
// fragmented (reserved − used in segments that hold live blocks), for one
// pool or a device's pools together. The summary view shows one per pool and
// per device.
#pragma once

#include <QChartView>
#include <QString>
#include <cstdint>

#include "memtrail/session.hpp"

namespace memtrail::gui {

struct PieFigures {
  QString title;  // "malloc (host)", "device 0: 3 pools"
  std::uint64_t used = 0, cached_free = 0, fragmented = 0;
  bool reserved_known = true;  // false: source none, only used is known
};

// `name`: the pool's label in every view ("mmap #2" where names repeat).
PieFigures pieFigures(const PoolBreakdown& pool, const QString& name);
// Adds `pool` into a device's total. Start the total with reserved_known =
// false: it stays unknown only if it is unknown for every pool added.
void addToPie(PieFigures& total, const PoolBreakdown& pool);
// Nothing reserved and nothing used at the moment: no pie to draw.
bool idleAtMoment(const PoolBreakdown& pool);

// The pie with its title above it (reserved bytes, or why only used shows).
QWidget* makeBreakdownPie(const PieFigures& figures, QWidget* parent = nullptr);

}  // namespace memtrail::gui
