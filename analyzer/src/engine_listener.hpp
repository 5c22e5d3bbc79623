// What a tracker (analysis_pass.hpp) hears from the Engine during the read
// beyond the records its own visitor sees: the Engine's decisions, which no
// visitor in front of it can know — whether an event falls inside the
// analyzed range, whether a pool is analyzed (AnalysisOptions::pools).
#pragma once

#include "memtrail/event.hpp"

namespace memtrail::detail {

class EngineListener {
 public:
  virtual ~EngineListener() = default;
  // Every pool record, `included` as AnalysisOptions::pools decides it.
  virtual void on_pool(const PoolInfo& /*pool*/, bool /*included*/) {}
  // Every scope record.
  virtual void on_scope(const ScopeInfo& /*scope*/) {}
  // An event of a kind listened to (Engine::listen), or every event once
  // Engine::listen_to_every_event; `in_range` as the Engine decided it.
  virtual void on_event(const Event& /*e*/, bool /*in_range*/) {}
};

}  // namespace memtrail::detail
