#include "session_taps.hpp"

#include <algorithm>

namespace memtrail::detail {

namespace {
constexpr std::uint32_t kMaxTapThreads = 1u << 18;
constexpr std::uint32_t kMaxTapPools = 1u << 14;  // the Engine's kMaxPools
}  // namespace

bool SessionTaps::grow(std::uint32_t pool) {
  if (pool >= kMaxTapPools) return false;
  used_.resize(pool + 1, SeriesTrack(buckets_));
  reserved_.resize(pool + 1, SeriesTrack(buckets_));
  return true;
}

bool SessionTaps::second_leaf(std::uint32_t pool) {
  if (only_leaf_ == kNoPool) {
    only_leaf_ = pool;
    return false;
  }
  several_leaves_ = true;
  if (only_leaf_ < used_.size()) process_used_ = used_[only_leaf_];
  return true;
}

void SessionTaps::sample(const Event& e) {
  samples_[0].record(e.time_ns, sample_rss(e));
  samples_[1].record(e.time_ns, sample_heap_used(e));
  samples_[2].record(e.time_ns, sample_heap_reserved(e));
  samples_[3].record(e.time_ns, sample_device_free(e));
  any_device_free_ |= sample_device_free(e) != 0;
  if (heap_reserved_.size() >= (std::size_t{1} << 16)) {
    std::size_t w = 0;
    for (std::size_t r = 0; r < heap_reserved_.size(); r += 2)
      heap_reserved_[w++] = heap_reserved_[r];
    heap_reserved_.resize(w);
  }
  heap_reserved_.emplace_back(e.time_ns, sample_heap_reserved(e));
}

void SessionTaps::oom(const Event& e, std::string message) {
  if (ooms_.size() >= max_ooms_) return;
  ooms_.push_back(
      OomEvent{e.time_ns, PoolId{e.pool}, e.thread, StackId{e.stack}, e.size, std::move(message)});
}

void SessionTaps::scope_begin(const Event& e, std::uint32_t scope) {
  if (e.thread >= kMaxTapThreads || max_scopes_ == 0) return;
  if (e.thread >= open_.size()) open_.resize(e.thread + 1);
  auto& stack = open_[e.thread];
  if (scopes_.size() >= 2 * max_scopes_) {
    // Keep the most recent: drop the older half at once (amortized O(1)).
    std::size_t drop = scopes_.size() - max_scopes_;
    scopes_.erase(scopes_.begin(), scopes_.begin() + static_cast<std::ptrdiff_t>(drop));
    base_ += drop;
    dropped_scopes_ += drop;
  }
  ScopeInterval s;
  s.scope = scope;
  s.thread = e.thread;
  s.begin_ns = e.time_ns;
  s.depth = static_cast<std::uint32_t>(stack.size());
  s.entry = ++scope_entries_[scope];
  stack.push_back(base_ + scopes_.size());
  scopes_.push_back(s);
}

void SessionTaps::scope_end(const Event& e, std::uint32_t scope) {
  if (e.thread >= open_.size()) return;
  auto& stack = open_[e.thread];
  // As the Engine: the end of an entry also closes the entries left open
  // inside it; an end without a begin on this thread is ignored.
  auto it = std::find_if(stack.rbegin(), stack.rend(), [&](std::uint64_t ord) {
    return ord >= base_ ? scopes_[ord - base_].scope == scope : false;
  });
  if (it == stack.rend()) return;
  std::size_t keep = static_cast<std::size_t>(stack.rend() - it) - 1;
  for (std::size_t i = keep; i < stack.size(); ++i)
    if (stack[i] >= base_) scopes_[stack[i] - base_].end_ns = e.time_ns;
  stack.resize(keep);
}

void SessionTaps::finish() {
  for (auto& s : used_) s.finish();
  for (auto& s : reserved_) s.finish();
  process_used_.finish();
  for (auto& s : samples_) s.finish();
  if (scopes_.size() > max_scopes_) {
    std::size_t drop = scopes_.size() - max_scopes_;
    scopes_.erase(scopes_.begin(), scopes_.begin() + static_cast<std::ptrdiff_t>(drop));
    dropped_scopes_ += drop;
  }
  open_.clear();
}

}  // namespace memtrail::detail
