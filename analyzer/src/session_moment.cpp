// Answers about one moment: the segment map, the reserved/used breakdown and
// the OOM explanation, from a replay of the file up to that moment.
#include <algorithm>

#include "session_impl.hpp"

namespace memtrail {

AnalysisOptions detail::SessionState::replay_options() const {
  AnalysisOptions o;
  o.pools = options.analysis.pools;
  o.timeline_points = 16;
  o.symbolize = false;
  o.max_large_blocks = 0;
  o.max_marks = 0;
  return o;
}

std::unique_ptr<detail::Engine> detail::SessionState::replay(std::uint64_t t, std::uint64_t events,
                                                             std::string& error) const {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || static_cast<std::uint64_t>(st.st_size) != file_bytes ||
      st.st_mtim.tv_sec != mtime.tv_sec || st.st_mtim.tv_nsec != mtime.tv_nsec) {
    error = path + ": the file changed since it was opened";
    return nullptr;
  }
  TraceReader reader(path);
  auto fresh = [&] {
    auto e = std::make_unique<detail::Engine>(replay_options(), ProgressFn{});
    e->stop_after(t);
    e->stop_after_events(events);
    e->set_sample_fragmentation(false);
    e->skip_stack_nodes();
    return e;
  };
  auto engine = fresh();
  ReadResult r;
  const Checkpoint* c =
      events != kNoPosition ? checkpoints.for_position(events) : checkpoints.for_time(t);
  if (c) {
    for (const PoolStats& p : whole.pools) engine->on_pool(p.info);
    engine->restore(c->pools, c->events_before, c->last_time_before);
    r = reader.read_from(*engine, c->chunk_offset);
    if (r.ok) return engine;
    // Not resumable after all (a table id past the dense range?): from the start.
    engine = fresh();
  }
  r = reader.read(*engine);
  if (!reader.header_error().empty() || !r.ok) {
    error = !reader.header_error().empty() ? reader.header_error() : r.error;
    return nullptr;
  }
  return engine;
}

namespace {

// A pool with segments that hands out a block outside them (a workspace's
// spill, taken from its upstream) holds that block's bytes too: they count
// as reserved, so that reserved = used + free in every view of the moment
// (the Fragmentation header, the Summary pie, `report --at`).
// The tracer's mmap pool (PoolKind::mmap) records each mapping as a segment
// with no block in it. Nothing there is cached for reuse (munmap gives it
// back at once), so a mapping is memory the program holds: one live block
// as large as the segment, used and never "cached free" (a 1 GiB mapping
// under a BFC arena read "cached free 1 GiB", issue 30).
SegmentMap mappings_are_used(SegmentMap m) {
  if (m.pool_state.info.kind != PoolKind::mmap) return m;
  for (SegmentInfo& seg : m.segments)
    if (seg.blocks.empty()) seg.blocks.push_back(BlockInfo{seg.address, seg.size});
  Fragmentation& f = m.fragmentation;
  m.pool_state.final_used_bytes = m.pool_state.final_reserved_bytes;
  f.used_bytes = f.reserved_bytes;
  f.free_bytes = f.free_in_partial_segments = f.largest_free_block = 0;
  f.external = 0;
  return m;
}

SegmentMap held_by_pool(SegmentMap m) {
  m = mappings_are_used(std::move(m));
  if (!m.pool_state.has_segments) return m;
  std::uint64_t outside = 0;
  for (const BlockInfo& b : m.outside_segments) outside += b.size;
  m.pool_state.final_reserved_bytes += outside;
  m.fragmentation.reserved_bytes += outside;
  return m;
}

}  // namespace

SegmentMap Session::segment_map(PoolId pool, std::uint64_t time_ns) const {
  SegmentMap m;
  if (!impl_->analyzed(pool)) {
    m.error = impl_->path + ": pool " + std::to_string(pool.value) + " is not in the session";
    return m;
  }
  auto engine = impl_->replay_to(time_ns, m.error);
  if (!engine) return m;
  m = held_by_pool(engine->segment_map(pool.value, true));
  m.time_ns = time_ns;
  m.fragmentation.time_ns = time_ns;
  return m;
}

SegmentMap Session::segment_map_at_position(PoolId pool, std::uint64_t events) const {
  SegmentMap m;
  if (!impl_->analyzed(pool)) {
    m.error = impl_->path + ": pool " + std::to_string(pool.value) + " is not in the session";
    return m;
  }
  auto engine = impl_->replay_to_position(events, m.error);
  if (!engine) return m;
  m = held_by_pool(engine->segment_map(pool.value, true));
  m.time_ns = m.fragmentation.time_ns = engine->last_time_ns();
  return m;
}

namespace {

// The malloc pool's reserved bytes: glibc's heap_reserved of the last sample
// at or before t.
bool heap_reserved_at(const detail::SessionTaps& taps, std::uint64_t t, std::uint64_t& v) {
  const auto& s = taps.heap_reserved_;
  auto it = std::upper_bound(s.begin(), s.end(), t,
                             [](std::uint64_t x, const auto& e) { return x < e.first; });
  if (it == s.begin()) return false;
  v = std::prev(it)->second;
  return true;
}

}  // namespace

namespace {

// Every analyzed pool of the replayed state; `time_ns` picks the heap sample.
std::vector<PoolBreakdown> breakdown_of(const detail::SessionState& s, detail::Engine& engine,
                                        std::uint64_t time_ns) {
  std::vector<PoolBreakdown> out;
  for (const PoolStats& p : s.whole.pools) {
    SegmentMap m = held_by_pool(engine.segment_map(p.info.id));
    PoolBreakdown b;
    b.pool = PoolId{p.info.id};
    b.name = p.info.name;
    b.space = p.info.space;
    b.device = p.info.device;
    b.used = m.pool_state.final_used_bytes;
    b.reserved = b.used;
    std::uint64_t heap = 0;
    if (p.has_segments) {
      b.source = PoolBreakdown::Source::segments;
      b.reserved = m.pool_state.final_reserved_bytes;
      b.fragmented = m.fragmentation.free_in_partial_segments;
      b.cached_free = m.fragmentation.free_bytes - m.fragmentation.free_in_partial_segments;
    } else if (p.info.kind == PoolKind::heap && heap_reserved_at(*s.taps, time_ns, heap)) {
      b.source = PoolBreakdown::Source::heap_samples;
      b.reserved = heap;
      b.fragmented = heap > b.used ? heap - b.used : 0;
    }
    out.push_back(std::move(b));
  }
  return out;
}

}  // namespace

std::vector<PoolBreakdown> Session::breakdown(std::uint64_t time_ns) const {
  std::string error;
  auto engine = impl_->replay_to(time_ns, error);
  if (!engine) return {};
  return breakdown_of(*impl_, *engine, time_ns);
}

std::vector<PoolBreakdown> Session::breakdown_at_position(std::uint64_t events) const {
  std::string error;
  auto engine = impl_->replay_to_position(events, error);
  if (!engine) return {};
  return breakdown_of(*impl_, *engine, engine->last_time_ns());
}

OomExplanation Session::explain(std::uint64_t time_ns, std::uint64_t requested) const {
  OomExplanation x;
  x.time_ns = time_ns;
  if (requested == 0)
    for (const OomEvent& o : impl_->taps->ooms_)
      if (o.time_ns == time_ns) {
        requested = o.requested;
        break;
      }
  x.requested = requested;
  auto engine = impl_->replay_to(time_ns, x.error);
  if (!engine) return x;
  for (const PoolStats& p : impl_->whole.pools) {
    if (!p.has_segments) continue;
    SegmentMap m = held_by_pool(engine->segment_map(p.info.id, true));
    OomExplanation::PoolPart part;
    part.pool = PoolId{p.info.id};
    part.name = p.info.name;
    part.reserved = m.pool_state.final_reserved_bytes;
    part.used = m.pool_state.final_used_bytes;
    part.free = m.fragmentation.free_bytes;
    part.largest_free = m.fragmentation.largest_free_block;
    part.request_fits = part.largest_free >= requested;
    for (SegmentInfo& seg : m.segments) {
      if (seg.blocks.empty()) continue;
      OomExplanation::PinnedSegment pin;
      for (const SegmentSpan& s : segment_spans(seg))
        if (s.state != SpanState::allocated) {
          pin.free_bytes += s.size;
          pin.largest_free = std::max(pin.largest_free, s.size);
        }
      if (pin.free_bytes == 0) continue;  // full: pins nothing
      pin.segment = std::move(seg);
      part.pinned.push_back(std::move(pin));
    }
    std::stable_sort(part.pinned.begin(), part.pinned.end(),
                     [](const auto& a, const auto& b) { return a.free_bytes > b.free_bytes; });
    x.pools.push_back(std::move(part));
  }
  return x;
}

std::vector<SegmentSpan> segment_spans(const SegmentInfo& segment) {
  std::vector<SegmentSpan> out;
  const std::uint64_t lo = segment.address, hi = segment.address + segment.size;
  if (segment.blocks.empty()) {
    out.push_back(SegmentSpan{lo, segment.size, SpanState::cached_free});
    return out;
  }
  std::uint64_t cursor = lo;
  for (const BlockInfo& b : segment.blocks) {
    std::uint64_t start = std::max(b.address, cursor), end = std::min(hi, b.address + b.size);
    if (start > cursor)
      out.push_back(SegmentSpan{cursor, start - cursor, SpanState::inactive_split});
    if (end <= start) continue;  // overlaps the previous block entirely
    SegmentSpan s{start, end - start, SpanState::allocated, b.stack, b.thread, b.alloc_ns};
    out.push_back(s);
    cursor = end;
  }
  if (hi > cursor) out.push_back(SegmentSpan{cursor, hi - cursor, SpanState::inactive_split});
  return out;
}

}  // namespace memtrail
