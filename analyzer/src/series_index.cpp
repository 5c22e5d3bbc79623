#include "series_index.hpp"

#include <algorithm>

namespace memtrail::detail {

namespace {

// Pairs the buckets of a row into the row of twice their width. `first` is
// the row's first absolute index; the result starts at first >> 1.
std::vector<MinMax> pair_up(const std::vector<MinMax>& row, std::uint64_t first) {
  std::vector<MinMax> out;
  out.reserve(row.size() / 2 + 1);
  std::uint64_t new_first = first >> 1;
  for (std::size_t i = 0; i < row.size(); ++i) {
    std::size_t target = static_cast<std::size_t>(((first + i) >> 1) - new_first);
    if (target == out.size()) {
      out.push_back(row[i]);
      continue;
    }
    MinMax& m = out[target];
    m.min = std::min(m.min, row[i].min);
    m.max = std::max(m.max, row[i].max);
    m.last = row[i].last;  // the later bucket's
  }
  return out;
}

}  // namespace

void SeriesTrack::record_new_bucket(std::uint64_t t, std::uint64_t v) {
  std::vector<MinMax>& row = rows_[0];
  if (row.empty()) {
    first_ = t >> shift_;
    row.push_back({v, v, v});
  } else {
    std::uint64_t idx = t >> shift_;
    while (idx > first_ && idx - first_ + 1 > max_buckets_) {
      halve();
      idx = t >> shift_;
    }
    // A gap: the buckets in between hold the value carried over it.
    std::uint64_t carry = row.back().last;
    while (first_ + row.size() - 1 < idx) row.push_back({carry, carry, carry});
    MinMax& b = row.back();
    b.min = std::min(b.min, v);
    b.max = std::max(b.max, v);
    b.last = v;
  }
  cur_ = &row.back();
  std::uint64_t next = first_ + row.size();
  // 0 (every event takes this slow path) if the next start overflows.
  next_bucket_ns_ = next < (std::uint64_t{1} << (64 - shift_)) ? next << shift_ : 0;
}

void SeriesTrack::halve() {
  rows_[0] = pair_up(rows_[0], first_);
  first_ >>= 1;
  ++shift_;
}

void SeriesTrack::finish() {
  rows_.resize(1);
  next_bucket_ns_ = 0;  // a record() after finish() takes the slow path
  std::uint64_t first = first_;
  while (rows_.back().size() > 1 && shift_ + rows_.size() < 63) {
    std::vector<MinMax> up = pair_up(rows_.back(), first);
    first >>= 1;
    rows_.push_back(std::move(up));
  }
}

bool SeriesTrack::fold(std::size_t level, std::uint64_t a, std::uint64_t b, MinMax& out) const {
  const std::vector<MinMax>& row = rows_[level];
  if (row.empty()) return false;
  unsigned s = shift_ + static_cast<unsigned>(level);
  std::uint64_t first = first_ >> level, end = first + row.size();  // [first, end)
  std::uint64_t lo = a >> s, hi = (b - 1) >> s;
  if (hi < first) return false;  // before the first value
  bool any = false;
  auto take = [&](const MinMax& m) {
    out.min = any ? std::min(out.min, m.min) : m.min;
    out.max = any ? std::max(out.max, m.max) : m.max;
    any = true;
  };
  for (std::uint64_t i = std::max(lo, first); i <= hi && i < end; ++i) take(row[i - first]);
  if (hi >= end) {  // past the last bucket: the series keeps its last value
    std::uint64_t v = row.back().last;
    take({v, v, v});
  }
  return any;
}

Envelope SeriesTrack::query(std::uint64_t t0, std::uint64_t t1, std::size_t points) const {
  Envelope e;
  e.t0 = t0;
  e.t1 = t1;
  std::uint64_t span = t1 - t0 + 1;
  e.step_ns = std::max<std::uint64_t>(1, (span + points - 1) / points);
  // The coarsest level whose buckets are no wider than a quarter point: a
  // point folds at most ~5 buckets, and its envelope reaches at most a
  // quarter point past its edges (a bucket straddling them).
  std::size_t level = 0;
  while (level + 1 < rows_.size() && (std::uint64_t{4} << (shift_ + level + 1)) <= e.step_ns)
    ++level;
  e.time_ns.resize(points);
  e.min.assign(points, 0);
  e.max.assign(points, 0);
  e.has_data.assign(points, 0);
  for (std::size_t i = 0; i < points; ++i) {
    std::uint64_t a = t0 + i * e.step_ns;
    e.time_ns[i] = a;
    MinMax m;
    if (!fold(level, a, a + e.step_ns, m)) continue;
    e.min[i] = m.min;
    e.max[i] = m.max;
    e.has_data[i] = 1;
    e.max_of_all = std::max(e.max_of_all, m.max);
  }
  value_at(t1, e.last);
  return e;
}

bool SeriesTrack::value_at(std::uint64_t t, std::uint64_t& v) const {
  const std::vector<MinMax>& row = rows_[0];
  std::uint64_t idx = t >> shift_;
  if (row.empty() || idx < first_) return false;
  v = idx - first_ < row.size() ? row[idx - first_].last : row.back().last;
  return true;
}

std::size_t SeriesTrack::memory_bytes() const {
  std::size_t n = 0;
  for (const auto& r : rows_) n += r.capacity() * sizeof(MinMax);
  return n;
}

}  // namespace memtrail::detail
