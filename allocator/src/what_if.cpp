#include "memtrail/alloc/what_if.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <utility>

namespace memtrail::alloc {
namespace {

// How often (in ops or reserve changes) `wanted` is asked.
constexpr std::uint64_t kPollEvery = 1 << 14;

// Puts each level of the replay at the recorded time of the op after which
// the policy held it, and passes stats and OOMs on to `next`.
class SeriesSink final : public ReplaySink {
 public:
  SeriesSink(const std::vector<std::uint64_t>& times, LevelBuckets& reserved,
             LevelBuckets& allocated, ReplaySink* next, const std::function<bool()>& wanted)
      : times_(times), reserved_(reserved), allocated_(allocated), next_(next), wanted_(wanted) {}
  void on_stats(const ReplayOp& op, const std::map<std::string, std::int64_t>& stats) override {
    if (next_) next_->on_stats(op, stats);
  }
  void on_oom(const ReplayOp& op, const std::string& message) override {
    if (next_) next_->on_oom(op, message);
  }
  void on_level(std::uint64_t ops_done, std::uint64_t reserved, std::uint64_t allocated) override {
    if (next_) next_->on_level(ops_done, reserved, allocated);
    if (times_.empty()) return;
    if (wanted_ && ops_done % kPollEvery == 0 && !wanted_()) throw WhatIfCancelled();
    const std::uint64_t t =
        times_[ops_done ? std::min<std::size_t>(ops_done, times_.size()) - 1 : 0];
    reserved_.set(t, reserved);
    allocated_.set(t, allocated);
  }

 private:
  const std::vector<std::uint64_t>& times_;
  LevelBuckets &reserved_, &allocated_;
  ReplaySink* next_;
  const std::function<bool()>& wanted_;
};

ReplayAllocator allocator_of(const std::string& name) {
  if (name == "caching") return ReplayAllocator::caching;
  if (name == "bfc") return ReplayAllocator::bfc;
  if (name == "malloc") return ReplayAllocator::malloc;
  throw ReplayError("unknown allocator '" + name + "' (caching, bfc, malloc or workspace)");
}

// The window, its default filled in from the replayed events' times (which
// may be out of order across threads: the least and the most).
SeriesWindow window_over(const SeriesWindow& w, const std::vector<std::uint64_t>& times) {
  if (w.t0 != 0 || w.t1 != 0 || times.empty()) return w;
  const auto [lo, hi] = std::minmax_element(times.begin(), times.end());
  return {*lo, *hi, w.points};
}

void replay_policy(const std::string& trace, const WhatIfPolicy& p, const SeriesWindow& window,
                   ReplaySink* next, const std::function<bool()>& wanted, WhatIfOutcome& out) {
  ReplayOptions options;
  options.allocator = allocator_of(p.allocator);
  options.conf = p.conf;
  options.capacity = p.capacity;
  options.keep_addresses = p.keep_addresses;
  const ReplayScript script = ReplayScript::from_trace(trace, p.pool, p.partial);
  out.warning = script.warning;
  const SeriesWindow w = window_over(window, script.op_time_ns);
  LevelBuckets reserved(w.t0, w.t1, w.points), allocated(w.t0, w.t1, w.points);
  SeriesSink sink(script.op_time_ns, reserved, allocated, next, wanted);
  out.replay = run_replay(script, options, &sink);
  out.reserved = reserved.finish();
  out.allocated = allocated.finish();
}

// The workspace's reserve changes are few (its buffer and spills), so they
// are kept and bucketed once the window is known.
void replay_workspace(const std::string& trace, const WhatIfPolicy& p, const SeriesWindow& window,
                      const std::function<bool()>& wanted, WhatIfOutcome& out) {
  if (p.mark.empty()) throw ReplayError("the workspace policy needs an iteration scope or mark");
  out.workspace = true;
  WorkspaceReplayOptions o;
  o.pool = p.pool;
  o.mark = p.mark;
  o.allow_partial = p.partial;
  o.config = WorkspaceConfiguration::parse(p.conf);
  std::vector<std::uint64_t> times, levels;
  o.on_reserved = [&](std::uint64_t t, std::uint64_t bytes) {
    if (wanted && (times.size() + 1) % kPollEvery == 0 && !wanted()) throw WhatIfCancelled();
    times.push_back(t);
    levels.push_back(bytes);
  };
  out.workspace_result = replay_workspace(trace, o);
  out.warning = out.workspace_result.warning;
  const SeriesWindow w = window_over(window, times);
  LevelBuckets reserved(w.t0, w.t1, w.points);
  for (std::size_t i = 0; i < times.size(); ++i) reserved.set(times[i], levels[i]);
  out.reserved = reserved.finish();
}

nlohmann::json buckets_json(const LevelSeries& s) {
  nlohmann::json a = nlohmann::json::array();
  for (std::size_t i = 0; i < s.max.size(); ++i)
    a.push_back(s.has_data[i] ? nlohmann::json(s.max[i]) : nlohmann::json());
  return a;
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
  s_.points = points;
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
  if (time_ns > s_.t1) return;  // past the window: never drawn
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

WhatIfOutcome run_what_if(const std::string& trace, const WhatIfPolicy& policy,
                          const SeriesWindow& window, ReplaySink* sink,
                          const std::function<bool()>& wanted) {
  WhatIfOutcome out;
  if (policy.allocator == "workspace")
    replay_workspace(trace, policy, window, wanted, out);
  else
    replay_policy(trace, policy, window, sink, wanted, out);
  return out;
}

nlohmann::json series_json(const WhatIfOutcome& o) {
  nlohmann::json j = {{"t0_ns", o.reserved.t0},
                      {"t1_ns", o.reserved.t1},
                      {"points", o.reserved.points},
                      {"step_ns", o.reserved.step_ns},
                      {"reserved", buckets_json(o.reserved)}};
  if (!o.workspace) j["allocated"] = buckets_json(o.allocated);
  return j;
}

}  // namespace memtrail::alloc
