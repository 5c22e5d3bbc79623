// Bounded timelines for a streaming pass whose duration is unknown up front:
// buckets start 1 us wide and double (adjacent pairs merged) whenever there
// would be more than 2N of them, so a series keeps between N and 2N points
// whatever the trace length. Each bucket keeps the maximum of each channel,
// so peaks survive decimation.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "memtrail/analysis.hpp"

namespace memtrail::detail {

class Decimator {
 public:
  Decimator(std::size_t channels, std::size_t target_points)
      : channels_(std::min<std::size_t>(channels, 4)),
        max_buckets_(std::max<std::size_t>(2, 2 * target_points)) {}

  // The channels changed to `values` at time `t`. Returns true when this
  // opened a new bucket (callers sample costly metrics once per bucket).
  bool record(std::uint64_t t, const std::uint64_t* values) {
    if (__builtin_expect(t < next_bucket_ns_, 1)) {
      // Fast path, inlined at every call site: same bucket (or a late event
      // folded into it): one compare, then the last bucket.
      std::uint64_t* b = data_.data() + (data_.size() - channels_);
      for (std::size_t c = 0; c < channels_; ++c) {
        current_[c] = values[c];
        if (values[c] > b[c]) b[c] = values[c];
      }
      return false;
    }
    return record_new_bucket(t, values);
  }
  // record() for a decimator of exactly N channels: the per-event callers
  // know N, so the channel loop unrolls.
  template <std::size_t N>
  [[gnu::always_inline]] bool record_n(std::uint64_t t, const std::uint64_t* values) {
    if (__builtin_expect(t < next_bucket_ns_, 1)) {
      std::uint64_t* b = data_.data() + (data_.size() - N);
      for (std::size_t c = 0; c < N; ++c) {
        current_[c] = values[c];
        if (values[c] > b[c]) b[c] = values[c];
      }
      return false;
    }
    return record_new_bucket(t, values);
  }

 private:
  __attribute__((noinline)) bool record_new_bucket(std::uint64_t t, const std::uint64_t* values) {
    std::uint64_t idx = t >> shift_;
    bool opened = false;
    if (data_.empty()) {
      open_until(idx);
      opened = true;
    } else if (idx > last_) {
      while (idx - first_ + 1 > max_buckets_) {
        halve();
        idx = t >> shift_;
      }
      if (idx > last_) {
        open_until(idx);
        opened = true;
      }
    }
    // Late (out of order) events fold into the current bucket.
    std::uint64_t* b = &data_[(data_.size() - channels_)];
    for (std::size_t c = 0; c < channels_; ++c) {
      current_[c] = values[c];
      b[c] = std::max(b[c], values[c]);
    }
    // Start of the bucket after the last; 0 (slow path) if that overflows.
    next_bucket_ns_ = last_ + 1 < (std::uint64_t{1} << (64 - shift_)) ? (last_ + 1) << shift_ : 0;
    return opened;
  }

 public:
  std::uint64_t bucket_width_ns() const { return std::uint64_t{1} << shift_; }

  Series series(std::size_t channel) const {
    Series s;
    std::size_t n = data_.size() / channels_;
    std::uint64_t first = first_;
    s.time_ns.reserve(n);
    s.value.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
      s.time_ns.push_back((first + i) << shift_);
      s.value.push_back(data_[i * channels_ + channel]);
    }
    return s;
  }

 private:
  // Appends buckets up to index `idx`, each starting at the current values
  // (the state carries over an empty stretch of time).
  void open_until(std::uint64_t idx) {
    if (data_.empty()) {
      // The series starts at the first event, not at time 0.
      first_ = idx;
      last_ = idx;
      data_.insert(data_.end(), current_.begin(), current_.begin() + channels_);
      return;
    }
    while (last_ < idx) {
      ++last_;
      data_.insert(data_.end(), current_.begin(), current_.begin() + channels_);
    }
  }

  // Doubles the bucket width. Bucket indices are absolute (t >> shift), so
  // buckets 2k and 2k+1 merge into k.
  void halve() {
    std::size_t n = data_.size() / channels_;
    std::uint64_t first = first_;
    std::vector<std::uint64_t> merged;
    merged.reserve(data_.size() / 2 + channels_);
    std::uint64_t new_first = first >> 1;
    for (std::size_t i = 0; i < n; ++i) {
      std::size_t target = static_cast<std::size_t>(((first + i) >> 1) - new_first);
      if (merged.size() < (target + 1) * channels_)
        merged.insert(merged.end(), data_.begin() + i * channels_,
                      data_.begin() + (i + 1) * channels_);
      else
        for (std::size_t c = 0; c < channels_; ++c)
          merged[target * channels_ + c] =
              std::max(merged[target * channels_ + c], data_[i * channels_ + c]);
    }
    data_ = std::move(merged);
    ++shift_;
    first_ = new_first;
    last_ >>= 1;
  }

  std::size_t channels_;
  std::size_t max_buckets_;
  unsigned shift_ = 10;  // 1.024 us
  std::uint64_t first_ = 0, last_ = 0;
  // (last_ + 1) << shift_ once data_ holds a bucket; the fast path takes
  // every t below it (idx <= last_). 0 while empty.
  std::uint64_t next_bucket_ns_ = 0;
  std::vector<std::uint64_t> data_;  // buckets first_..last_, channels_ each
  // Latest values, inline: the hot path touches only this object and the
  // last bucket.
  std::array<std::uint64_t, 4> current_{};  // channels <= 4
};

}  // namespace memtrail::detail
