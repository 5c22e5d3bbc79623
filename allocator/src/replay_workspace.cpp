// What-if replay of a workspace over a recorded trace (replay_workspace.hpp).
#include "memtrail/alloc/replay_workspace.hpp"

#include <set>
#include <unordered_set>

#include "memtrail/alloc/errors.hpp"
#include "memtrail/alloc/replay.hpp"
#include "memtrail/alloc/virtual_resource.hpp"
#include "memtrail/alloc/workspace.hpp"
#include "memtrail/trace_file.hpp"
#include "replay_read_status.hpp"

namespace memtrail::alloc {
namespace {

// The virtual host, counting what the workspace asks of it: every request is
// a system allocation the real workspace would make.
class CountingUpstream final : public Upstream {
 public:
  CountingUpstream()
      : Upstream("what-if host", MemorySpace::host, PoolKind::system, nullptr),
        inner_(0, "what-if virtual host", MemorySpace::host, -1) {}
  std::uint64_t capacity() const override { return inner_.capacity(); }
  std::uint64_t requests() const { return requests_; }
  std::uint64_t bytes_in_use() const { return inner_.bytes_in_use(); }

 protected:
  bool charges_process_limits() const override { return false; }
  void* acquire(std::size_t bytes, std::size_t alignment, UpstreamFailure* why) override {
    ++requests_;
    return inner_.allocate_segment(bytes, alignment, why);
  }
  void give_back(void* p, std::size_t bytes, std::size_t alignment) noexcept override {
    inner_.release_segment(p, bytes, alignment);
  }

 private:
  VirtualResource inner_;
  std::uint64_t requests_ = 0;
};

WorkspaceConfiguration virtual_config(WorkspaceConfiguration c) {
  c.validate();  // errors name the field the user wrote, before the overrides
  c.policy_location = LocationPolicy::RAM;
  c.policy_mirroring = MirroringPolicy::FULL;
  return c;
}

class IterationReplay final : public TraceVisitor {
 public:
  IterationReplay(const WorkspaceReplayOptions& o, WorkspaceReplayResult& r)
      : o_(o), r_(r), ws_(upstream_, virtual_config(o.config), "what-if") {}

  void on_string(std::uint32_t id, std::string_view text) override {
    if (text == o_.mark) mark_ids_.insert(id);
  }
  void on_scope(const ScopeInfo& s) override {
    if (s.name == o_.mark)
      scope_ids_.insert(s.id);
    else
      scope_ids_.erase(s.id);
  }
  void on_pool(const PoolInfo& p) override {
    seen_pools_.insert(p.name);
    if (p.name == o_.pool)
      pool_ids_.insert(p.id);
    else
      pool_ids_.erase(p.id);
  }
  void on_event(const Event& e) override {
    replay(e);
    if (!o_.on_reserved || upstream_.bytes_in_use() == reported_) return;
    reported_ = upstream_.bytes_in_use();
    o_.on_reserved(e.time_ns, reported_);
  }

  bool boundary_seen() const { return boundary_seen_; }
  bool pool_seen() const { return seen_pools_.count(o_.pool) > 0; }
  std::string pool_list() const {
    std::string out;
    for (const std::string& n : seen_pools_) out += (out.empty() ? "'" : ", '") + n + "'";
    return out.empty() ? "none" : out;
  }
  std::uint64_t learned_size() const { return ws_.stats().learned_size; }
  // An iteration still open at the end of the trace (after the last mark)
  // is not one: its allocations were made outside every iteration.
  void drop_open_iteration() {
    if (open_) r_.allocations_outside += recorded_;
  }

 private:
  void replay(const Event& e);
  void begin(std::uint32_t thread);
  void end();
  void allocate(const Event& e);

  const WorkspaceReplayOptions& o_;
  WorkspaceReplayResult& r_;
  CountingUpstream upstream_;
  Workspace ws_;
  std::set<std::uint32_t> mark_ids_, scope_ids_, pool_ids_;
  std::set<std::string> seen_pools_;
  bool boundary_seen_ = false;
  bool open_ = false, with_buffer_ = false;
  std::uint32_t thread_ = 0, depth_ = 0;
  std::uint64_t requests_before_ = 0, spills_before_ = 0;
  // Of the open iteration: allocations, their bytes, those that were `alloc`.
  std::uint64_t recorded_ = 0, recorded_bytes_ = 0, recorded_system_ = 0;
  std::unordered_set<std::uint64_t> live_;  // blocks of the open iteration
  std::uint64_t reported_ = 0;              // last bytes_in_use given to on_reserved
};

void IterationReplay::replay(const Event& e) {
  switch (e.kind) {
    case EventKind::mark:
      // Marks bound iterations only where no scope has the name.
      if (!scope_ids_.empty() || e.detail != static_cast<std::uint8_t>(MarkDetail::user) ||
          !mark_ids_.count(static_cast<std::uint32_t>(e.aux)))
        return;
      boundary_seen_ = true;
      if (open_ && e.thread != thread_) return;  // another thread's mark: not this loop
      if (open_) end();
      begin(e.thread);
      return;
    case EventKind::scope_begin:
      if (!scope_ids_.count(static_cast<std::uint32_t>(e.aux))) return;
      boundary_seen_ = true;
      r_.by_scope = true;
      if (!open_)
        begin(e.thread);
      else if (e.thread == thread_)
        ++depth_;  // nested entry of the same scope: one iteration
      return;
    case EventKind::scope_end:
      if (open_ && e.thread == thread_ && scope_ids_.count(static_cast<std::uint32_t>(e.aux)) &&
          --depth_ == 0)
        end();
      return;
    case EventKind::alloc:
    case EventKind::reuse:
      if (!pool_ids_.count(e.pool)) return;
      if (open_ && e.thread == thread_)
        allocate(e);
      else
        ++r_.allocations_outside;
      return;
    case EventKind::free:
      if (open_ && pool_ids_.count(e.pool)) live_.erase(e.address);
      return;
    default:
      return;
  }
}

void IterationReplay::begin(std::uint32_t thread) {
  open_ = true;
  thread_ = thread;
  depth_ = 1;
  ws_.enter();
  with_buffer_ = ws_.stats().current_size > 0;
  requests_before_ = upstream_.requests();
  spills_before_ = ws_.stats().external_total;
  recorded_ = recorded_bytes_ = recorded_system_ = 0;
}

void IterationReplay::allocate(const Event& e) {
  const std::uint64_t size = e.requested ? e.requested : e.size;
  ++recorded_;
  recorded_bytes_ += size;
  if (e.kind == EventKind::alloc) ++recorded_system_;
  live_.insert(e.address);
  try {
    ws_.alloc(size);
  } catch (const OutOfMemoryError&) {
    ++r_.failed_allocations;  // policySpill FAIL: the real program would throw here
  }
}

void IterationReplay::end() {
  ws_.close();
  open_ = false;
  ++r_.iterations;
  r_.allocations += recorded_;
  r_.bytes += recorded_bytes_;
  const WorkspaceStats s = ws_.stats();
  r_.spills += s.external_total - spills_before_;
  r_.peak_iteration_bytes = std::max(r_.peak_iteration_bytes, s.last_cycle_bytes);
  if (r_.learned_after_iteration == 0 && s.current_size > 0 && !with_buffer_)
    r_.learned_after_iteration = r_.iterations;
  r_.escaping_allocations += live_.size();
  live_.clear();
  if (!with_buffer_) return;
  ++r_.iterations_after_learning;
  r_.recorded_allocations_after_learning += recorded_system_;
  r_.system_allocations_after_learning += upstream_.requests() - requests_before_;
  r_.spills_after_learning += s.external_total - spills_before_;
}

}  // namespace

double WorkspaceReplayResult::recorded_per_iteration_after_learning() const {
  return iterations_after_learning ? static_cast<double>(recorded_allocations_after_learning) /
                                         static_cast<double>(iterations_after_learning)
                                   : 0;
}
double WorkspaceReplayResult::system_per_iteration_after_learning() const {
  return iterations_after_learning ? static_cast<double>(system_allocations_after_learning) /
                                         static_cast<double>(iterations_after_learning)
                                   : 0;
}
double WorkspaceReplayResult::removed_per_iteration() const {
  return recorded_per_iteration_after_learning() - system_per_iteration_after_learning();
}

WorkspaceReplayResult replay_workspace(const std::string& trace,
                                       const WorkspaceReplayOptions& options) {
  if (options.mark.empty()) throw ReplayError("the iteration mark is empty");
  TraceReader reader(trace);
  if (!reader.header_error().empty()) throw ReplayError(reader.header_error());
  WorkspaceReplayResult r;
  IterationReplay replay(options, r);
  ReadResult read = reader.read(replay);
  r.warning = replay_read_status(trace, read, options.allow_partial);
  if (!replay.pool_seen())
    throw ReplayError(trace + ": no pool named '" + options.pool +
                      "' (pools: " + replay.pool_list() + ")");
  if (!replay.boundary_seen())
    throw ReplayError(trace + ": no scope or mark named '" + options.mark + "'");
  replay.drop_open_iteration();
  r.learned_size = replay.learned_size();
  return r;
}

}  // namespace memtrail::alloc
