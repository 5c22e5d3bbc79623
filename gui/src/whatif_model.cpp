#include "whatif_model.hpp"

namespace memtrail::gui {

WhatIfModel::WhatIfModel(QObject* parent) : QObject(parent) {}

void WhatIfModel::start(const std::string& trace, const WhatIfSpec& spec, std::uint64_t t0,
                        std::uint64_t t1, std::size_t points) {
  running_ = true;
  result_.reset();
  tasks_.run<WhatIfResult>(
      [trace, spec, t0, t1, points](const BackgroundTasks::Wanted& wanted) {
        return run_what_if(trace, spec, t0, t1, points, wanted);
      },
      [this](WhatIfResult r) {
        running_ = false;
        result_ = std::move(r);
        emit finished();
      });
}

void WhatIfModel::cancel() {
  tasks_.cancel();
  running_ = false;
  result_.reset();
}

std::string default_what_if_pool(const Analysis& analysis) {
  const PoolStats* best = nullptr;
  for (const PoolStats& p : analysis.pools)
    if (p.has_segments && p.allocations > 0 &&
        (!best || p.peak_reserved_bytes > best->peak_reserved_bytes))
      best = &p;
  if (best) return best->info.name;
  for (const PoolStats& p : analysis.pools)
    if (!p.upstream && (!best || p.allocations > best->allocations)) best = &p;
  return best && best->allocations ? best->info.name : "malloc";
}

}  // namespace memtrail::gui
