// The What-if view's replay, off the GUI thread: start() returns at once and
// runs run_what_if (whatif_run.hpp) on a worker; finished() follows on the
// GUI thread with result() in place. A later start() or cancel() stops the
// one running (the engine polls for it) and drops its result.
#pragma once

#include <QObject>
#include <optional>
#include <string>

#include "background.hpp"
#include "memtrail/analysis.hpp"
#include "whatif_run.hpp"

namespace memtrail::gui {

class WhatIfModel : public QObject {
  Q_OBJECT

 public:
  explicit WhatIfModel(QObject* parent = nullptr);

  void start(const std::string& trace, const WhatIfSpec& spec, std::uint64_t t0, std::uint64_t t1,
             std::size_t points);
  void cancel();
  bool running() const { return running_; }
  // The last finished replay (nullopt before one, and after cancel()).
  const std::optional<WhatIfResult>& result() const { return result_; }

 signals:
  void finished();

 private:
  BackgroundTasks tasks_;
  bool running_ = false;
  std::optional<WhatIfResult> result_;
};

// The pool a what-if starts on: the one that reserved the most among those
// with segments (a pool of the allocator stack), else the leaf pool with the
// most allocations, else "malloc".
std::string default_what_if_pool(const Analysis& analysis);

}  // namespace memtrail::gui
