#include "whatif_run.hpp"

#include <algorithm>

#include "memtrail/alloc/errors.hpp"

namespace memtrail::gui {
namespace {

struct Cancelled {};

// How often (in ops or reserve changes) `wanted` is asked.
constexpr std::uint64_t kPollEvery = 1 << 14;

// Puts each level of the replay at the recorded time of the op after which
// the policy held it.
class SeriesSink final : public alloc::ReplaySink {
 public:
  SeriesSink(const std::vector<std::uint64_t>& times, LevelBuckets& reserved,
             LevelBuckets& allocated, const std::function<bool()>& wanted)
      : times_(times), reserved_(reserved), allocated_(allocated), wanted_(wanted) {}
  void on_stats(const alloc::ReplayOp&, const std::map<std::string, std::int64_t>&) override {}
  void on_oom(const alloc::ReplayOp&, const std::string&) override {}
  void on_level(std::uint64_t ops_done, std::uint64_t reserved, std::uint64_t allocated) override {
    if (times_.empty()) return;
    if (wanted_ && ops_done % kPollEvery == 0 && !wanted_()) throw Cancelled{};
    const std::uint64_t t =
        times_[ops_done ? std::min<std::size_t>(ops_done, times_.size()) - 1 : 0];
    reserved_.set(t, reserved);
    allocated_.set(t, allocated);
  }

 private:
  const std::vector<std::uint64_t>& times_;
  LevelBuckets &reserved_, &allocated_;
  const std::function<bool()>& wanted_;
};

alloc::ReplayAllocator allocator_of(const std::string& name) {
  if (name == "bfc") return alloc::ReplayAllocator::bfc;
  if (name == "malloc") return alloc::ReplayAllocator::malloc;
  return alloc::ReplayAllocator::caching;
}

void replay_policy(const std::string& trace, WhatIfResult& r, LevelBuckets& reserved,
                   LevelBuckets& allocated, const std::function<bool()>& wanted) {
  alloc::ReplayScript script = alloc::ReplayScript::from_trace(trace, r.spec.pool, false);
  r.warning = script.warning;
  alloc::ReplayOptions options;
  options.allocator = allocator_of(r.spec.allocator);
  options.conf = r.spec.conf;
  options.capacity = r.spec.capacity;
  SeriesSink sink(script.op_time_ns, reserved, allocated, wanted);
  r.replay = alloc::run_replay(script, options, &sink);
}

void replay_workspace(const std::string& trace, WhatIfResult& r, LevelBuckets& reserved,
                      const std::function<bool()>& wanted) {
  r.workspace = true;
  alloc::WorkspaceReplayOptions o;
  o.pool = r.spec.pool;
  o.mark = r.spec.mark;
  o.config = alloc::WorkspaceConfiguration::parse(r.spec.conf);
  std::uint64_t changes = 0;
  o.on_reserved = [&](std::uint64_t t, std::uint64_t bytes) {
    if (wanted && ++changes % kPollEvery == 0 && !wanted()) throw Cancelled{};
    reserved.set(t, bytes);
  };
  r.workspace_result = alloc::replay_workspace(trace, o);
  r.warning = r.workspace_result.warning;
}

}  // namespace

std::uint64_t LevelSeries::peak() const {
  std::uint64_t p = 0;
  for (std::size_t i = 0; i < max.size(); ++i)
    if (has_data[i]) p = std::max(p, max[i]);
  return p;
}

LevelBuckets::LevelBuckets(std::uint64_t t0, std::uint64_t t1, std::size_t points) {
  points = std::max<std::size_t>(points, 1);
  s_.t0 = t0;
  s_.t1 = std::max(t1, t0);
  s_.step_ns = (s_.t1 - s_.t0) / points + 1;
  const std::size_t n = static_cast<std::size_t>((s_.t1 - s_.t0) / s_.step_ns) + 1;
  s_.max.assign(n, 0);
  s_.has_data.assign(n, 0);
}

void LevelBuckets::enter_to(std::size_t bucket) {
  for (; next_ <= bucket && next_ < s_.max.size(); ++next_)
    if (has_level_) {
      s_.max[next_] = std::max(s_.max[next_], level_);
      s_.has_data[next_] = 1;
    }
}

void LevelBuckets::set(std::uint64_t time_ns, std::uint64_t level) {
  if (time_ns > s_.t1) return;  // past the range: never drawn
  if (time_ns >= s_.t0) {
    const auto b = static_cast<std::size_t>((time_ns - s_.t0) / s_.step_ns);
    enter_to(b);
    s_.max[b] = std::max(s_.max[b], level);
    s_.has_data[b] = 1;
  }
  level_ = level;
  has_level_ = true;
}

LevelSeries LevelBuckets::finish() {
  enter_to(s_.max.size() - 1);
  return std::move(s_);
}

WhatIfResult run_what_if(const std::string& trace, const WhatIfSpec& spec, std::uint64_t t0,
                         std::uint64_t t1, std::size_t points,
                         const std::function<bool()>& wanted) {
  WhatIfResult r;
  r.spec = spec;
  LevelBuckets reserved(t0, t1, points), allocated(t0, t1, points);
  try {
    if (spec.allocator == "workspace") {
      if (spec.mark.empty())
        throw alloc::ReplayError("the workspace policy needs an iteration scope or mark");
      replay_workspace(trace, r, reserved, wanted);
    } else {
      replay_policy(trace, r, reserved, allocated, wanted);
    }
  } catch (const Cancelled&) {
    r.cancelled = true;
    r.error = "cancelled";
  } catch (const alloc::ConfigError& e) {
    r.error = std::string("conf: ") + e.what();
  } catch (const std::exception& e) {
    r.error = e.what();
  }
  if (!r.error.empty()) return r;
  r.reserved = reserved.finish();
  r.allocated = allocated.finish();
  return r;
}

}  // namespace memtrail::gui
