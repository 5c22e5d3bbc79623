// Trace input of replays: one pool's alloc/free sequence from a .mtr file.
#include <algorithm>
#include <set>
#include <unordered_map>

#include "memtrail/alloc/replay.hpp"
#include "memtrail/trace_file.hpp"
#include "replay_read_status.hpp"

namespace memtrail::alloc {
namespace {

class PoolSequence final : public TraceVisitor {
 public:
  PoolSequence(std::string pool, ReplayScript& script) : pool_(std::move(pool)), script_(script) {}

  void on_pool(const PoolInfo& info) override {
    seen_.insert(info.name);
    if (info.name == pool_)
      ids_.insert(info.id);
    else
      ids_.erase(info.id);  // a record may rename an id
  }

  void on_event(const Event& e) override {
    if (!ids_.count(e.pool)) return;
    switch (e.kind) {
      case EventKind::alloc:
      case EventKind::reuse: {
        ++events_;
        if (auto it = live_.find(e.address); it != live_.end())
          emit_free(it, e.time_ns);  // missed free
        ReplayOp op;
        op.kind = ReplayOp::Kind::malloc;
        op.line = static_cast<std::uint32_t>(events_);
        op.size = e.requested ? e.requested : e.size;
        op.slot = take_slot();
        live_.emplace(e.address, op.slot);
        push(op, e.time_ns);
        break;
      }
      case EventKind::segment_reserve:
        if (e.detail == static_cast<std::uint8_t>(SegmentDetail::whole))
          script_.segment_addresses.push_back(e.address);
        break;
      case EventKind::free: {
        ++events_;
        if (auto it = live_.find(e.address); it != live_.end())
          emit_free(it, e.time_ns);
        else
          ++skipped_frees_;
        break;
      }
      default:
        break;
    }
  }

  std::uint64_t skipped_frees() const { return skipped_frees_; }
  bool found() const { return seen_.count(pool_) > 0; }
  std::string pool_list() const {
    std::string out;
    for (const std::string& name : seen_) out += (out.empty() ? "'" : ", '") + name + "'";
    return out.empty() ? "none" : out;
  }

 private:
  void push(const ReplayOp& op, std::uint64_t time_ns) {
    script_.ops.push_back(op);
    script_.op_time_ns.push_back(time_ns);
  }

  void emit_free(std::unordered_map<std::uint64_t, std::uint32_t>::iterator it,
                 std::uint64_t time_ns) {
    ReplayOp op;
    op.kind = ReplayOp::Kind::free;
    op.line = static_cast<std::uint32_t>(events_);
    op.slot = it->second;
    push(op, time_ns);
    free_slots_.push_back(it->second);
    live_.erase(it);
  }

  // Slots are recycled so a long trace needs only as many names as it has
  // live blocks at once.
  std::uint32_t take_slot() {
    if (!free_slots_.empty()) {
      std::uint32_t s = free_slots_.back();
      free_slots_.pop_back();
      return s;
    }
    script_.names.push_back("b" + std::to_string(script_.names.size()));
    return static_cast<std::uint32_t>(script_.names.size() - 1);
  }

  std::string pool_;
  ReplayScript& script_;
  std::set<std::uint32_t> ids_;
  std::set<std::string> seen_;
  std::unordered_map<std::uint64_t, std::uint32_t> live_;
  std::vector<std::uint32_t> free_slots_;
  std::uint64_t events_ = 0, skipped_frees_ = 0;
};

}  // namespace

ReplayScript ReplayScript::from_trace(const std::string& path, const std::string& pool,
                                      bool allow_partial) {
  TraceReader reader(path);
  if (!reader.header_error().empty()) throw ReplayError(reader.header_error());
  ReplayScript script;
  script.source = path;
  PoolSequence sequence(pool, script);
  ReadResult result = reader.read(sequence);
  std::string warning = replay_read_status(path, result, allow_partial);
  if (!sequence.found())
    throw ReplayError(path + ": no pool named '" + pool + "' (pools: " + sequence.pool_list() +
                      ")");
  if (sequence.skipped_frees()) {
    if (!warning.empty()) warning += "; ";
    warning += std::to_string(sequence.skipped_frees()) +
               " frees of blocks allocated before the trace started were skipped";
  }
  script.warning = warning;
  return script;
}

}  // namespace memtrail::alloc
