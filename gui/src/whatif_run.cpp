#include "whatif_run.hpp"

#include "memtrail/alloc/errors.hpp"

namespace memtrail::gui {

alloc::WhatIfPolicy what_if_policy(const WhatIfSpec& spec) {
  alloc::WhatIfPolicy p;
  p.allocator = spec.allocator;
  p.pool = spec.pool;
  p.conf = spec.conf;
  p.capacity = spec.capacity;
  p.mark = spec.mark;
  return p;
}

WhatIfResult run_what_if(const std::string& trace, const WhatIfSpec& spec, std::uint64_t t0,
                         std::uint64_t t1, std::size_t points,
                         const std::function<bool()>& wanted) {
  WhatIfResult r;
  r.spec = spec;
  try {
    alloc::WhatIfOutcome o =
        alloc::run_what_if(trace, what_if_policy(spec), {t0, t1, points}, nullptr, wanted);
    r.warning = std::move(o.warning);
    r.workspace = o.workspace;
    r.replay = o.replay;
    r.workspace_result = std::move(o.workspace_result);
    r.reserved = std::move(o.reserved);
    r.allocated = std::move(o.allocated);
  } catch (const alloc::WhatIfCancelled&) {
    r.cancelled = true;
    r.error = "cancelled";
  } catch (const alloc::ConfigError& e) {
    r.error = std::string("conf: ") + e.what();
  } catch (const std::exception& e) {
    r.error = e.what();
  }
  return r;
}

}  // namespace memtrail::gui
