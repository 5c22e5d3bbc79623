// SummaryView: the key numbers and the pies (layout of what the Session
// answered; nothing is computed here but sums of a device's leaf pools).
#include <QGridLayout>
#include <QLabel>
#include <map>
#include <tuple>

#include "breakdown_pie.hpp"
#include "format.hpp"
#include "summary_view.hpp"
#include "timeline_model.hpp"

namespace memtrail::gui {

namespace {

QString processesText(const std::optional<RunIndex>& run, const Analysis& a) {
  const QString self = QStringLiteral("pid %1 %2")
                           .arg(a.header.pid)
                           .arg(QString::fromStdString(a.header.command_line));
  if (!run) return QObject::tr("1 (%1)").arg(self);
  return QObject::tr("%1 in the run (showing %2)").arg(run->processes.size()).arg(self);
}

}  // namespace

void SummaryView::showNumbers() {
  if (!range_) {
    heading_->setText(session_ ? tr("Loading...") : tr("No trace loaded"));
    for (QLabel* v : values_) v->setText(QString());
    return;
  }
  const Analysis& a = *range_;
  const Summary& s = a.summary;
  const Leaks& l = a.leaks;
  const bool whole = session_ && &a == &session_->whole();
  heading_->setText(
      whole ? tr("Whole trace")
            : tr("Range %1 – %2").arg(durationText(a.range_from_ns), durationText(a.range_to_ns)));
  setValue("duration", tr("Duration"), durationText(s.duration_ns));
  setValue("peak-used", tr("Peak used"),
           tr("%1 at %2").arg(bytesText(s.peak_used_bytes), durationText(s.peak_time_ns)));
  setValue("leaked-direct", tr("Leaked, direct"), bytesAndBlocks(l.direct.bytes, l.direct.blocks));
  setValue("leaked-indirect", tr("Leaked, indirect"),
           bytesAndBlocks(l.indirect.bytes, l.indirect.blocks));
  setValue("possible", tr("Possibly lost"), bytesAndBlocks(l.possible.bytes, l.possible.blocks));
  setValue("reachable", tr("Reachable at exit"),
           bytesAndBlocks(l.reachable.bytes, l.reachable.blocks));
  setValue("runtime", tr("C/C++ runtime's blocks"),
           bytesAndBlocks(l.runtime.bytes, l.runtime.blocks));
  setValue("classified", tr("Leak classes"),
           l.classified ? tr("from the exit-time scan") : tr("none recorded: live = direct"));
  setValue("allocations", tr("Allocations"), countText(s.allocations));
  setValue("frees", tr("Frees"), countText(s.frees));
  setValue("temporaries", tr("Temporary allocations"), countText(s.temporary_allocations));
  setValue("bytes-allocated", tr("Bytes allocated"), bytesText(s.bytes_allocated));
  const bool trace_sampled = session_ && session_->whole().summary.samples;
  setValue("peak-rss", tr("Peak RSS"),
           s.samples       ? bytesText(s.peak_rss_bytes)
           : trace_sampled ? tr("no RSS sample in this range")
                           : tr("no samples in the trace"));
  setValue("processes", tr("Processes"), processesText(run_, a));
}

void SummaryView::showPies(const std::vector<PoolBreakdown>& pools) {
  while (QLayoutItem* item = pies_->takeAt(0)) {
    delete item->widget();
    delete item;
  }
  pie_titles_.clear();
  shown_pies_.clear();
  idle_pools_.clear();
  const Analysis* a = range_ ? range_.get() : nullptr;
  // A device's pie sums its leaf pools: an upstream's bytes are its
  // downstream pools' segments (docs/analyzer.md, "leaf pool").
  std::map<std::tuple<int, int>, std::pair<PieFigures, int>> devices;
  std::vector<PieFigures> figures;
  for (const PoolBreakdown& p : pools) {
    const QString name = a ? pool_label(*a, p.pool) : QString::fromStdString(p.name);
    // A pool that holds nothing at this moment would be an empty pie: it is
    // named on one line beneath the pies instead.
    if (idleAtMoment(p)) {
      idle_pools_ << name;
      continue;
    }
    figures.push_back(pieFigures(p, name));
    const PoolStats* stats = a ? a->pool(p.pool) : nullptr;
    if (stats && stats->upstream) continue;
    auto& [total, count] = devices[{static_cast<int>(p.space), p.device}];
    if (count++ == 0) {
      total.reserved_known = false;
      QString space =
          QString::fromUtf8(to_string(p.space).data(), static_cast<int>(to_string(p.space).size()));
      total.title = p.device >= 0 ? tr("%1 %2: all pools").arg(space).arg(p.device)
                                  : tr("%1: all pools").arg(space);
    }
    addToPie(total, p);
  }
  // A device with one leaf pool would repeat that pool's pie.
  std::vector<PieFigures> shown;
  for (auto& [key, entry] : devices)
    if (entry.second > 1) shown.push_back(entry.first);
  shown.insert(shown.end(), figures.begin(), figures.end());
  const int columns = 2;
  for (std::size_t i = 0; i < shown.size(); ++i) {
    pies_->addWidget(makeBreakdownPie(shown[i], pie_area_), static_cast<int>(i) / columns,
                     static_cast<int>(i) % columns);
    pie_titles_ << shown[i].title;
  }
  shown_pies_ = std::move(shown);
  idle_label_->setText(idle_pools_.isEmpty() ? QString()
                                             : tr("Nothing reserved or used at this moment: %1")
                                                   .arg(idle_pools_.join(QStringLiteral(", "))));
  idle_label_->setVisible(!idle_pools_.isEmpty());
}

}  // namespace memtrail::gui
