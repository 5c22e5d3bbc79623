// Session::series_list() and series(): answered from the index the pass
// built, without touching the file.
#include <algorithm>

#include "session_impl.hpp"

namespace memtrail {

const detail::SeriesTrack* detail::SessionState::track(const SeriesId& id) const {
  auto of_pool = [&](const std::vector<detail::SeriesTrack>& v) -> const detail::SeriesTrack* {
    const std::uint32_t pool = id.pool.value;
    return analyzed(id.pool) && pool < v.size() && !v[pool].empty() ? &v[pool] : nullptr;
  };
  switch (id.kind) {
    case SeriesKind::pool_used:
      return of_pool(taps->used_);
    case SeriesKind::pool_reserved:
      return of_pool(taps->reserved_);
    case SeriesKind::pool_external_fragmentation:
      return of_pool(fragmentation);
    case SeriesKind::process_used:
      return &taps->process_series();
    case SeriesKind::rss:
      return &taps->samples_[0];
    case SeriesKind::heap_used:
      return &taps->samples_[1];
    case SeriesKind::heap_reserved:
      return &taps->samples_[2];
    case SeriesKind::device_free:
      return &taps->samples_[3];
  }
  return nullptr;
}

std::vector<SeriesInfo> Session::series_list() const {
  return impl_->series;
}

Envelope Session::series(SeriesId id, std::uint64_t t0, std::uint64_t t1,
                         std::size_t points) const {
  const Impl& s = *impl_;
  t0 = std::max(t0, s.first_ns);
  t1 = std::min(t1, s.last_ns);
  const detail::SeriesTrack* track = s.track(id);
  if (points == 0 || t1 < t0 || !track) return Envelope{};
  return track->query(t0, t1, points);
}

}  // namespace memtrail
