// A growable array in fixed chunks of 2^ChunkBits elements: indexing is one
// shift, one mask and two loads, and growth never copies the elements (a
// vector's doubling of 10^6 sites was the session's largest peak).
//
// It replaces std::deque for the analysis pass's sites: libstdc++'s deque
// keeps 512 bytes per chunk, so two 184-byte sites a chunk and a map of
// 5*10^5 chunk pointers at 10^6 sites, whose entry missed the cache on
// most events of distinct-stacks-1e6 (16 % of the pass's samples on that
// one load). Here the chunk table is 1/1024 of the elements and stays in
// cache.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

namespace memtrail::detail {

template <class T, unsigned ChunkBits = 10>
class ChunkedStore {
 public:
  static constexpr std::size_t kChunk = std::size_t{1} << ChunkBits;

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  T& operator[](std::size_t i) { return chunks_[i >> ChunkBits][i & (kChunk - 1)]; }
  const T& operator[](std::size_t i) const { return chunks_[i >> ChunkBits][i & (kChunk - 1)]; }
  T& back() { return (*this)[size_ - 1]; }

  T& emplace_back() {
    if ((size_ & (kChunk - 1)) == 0 && (size_ >> ChunkBits) == chunks_.size())
      chunks_.push_back(std::make_unique<T[]>(kChunk));
    return (*this)[size_++];
  }

  // Moves every element out, in order, to `fn(T&&)`, freeing each chunk once
  // it has been handed over: the elements are never held twice.
  template <class Fn>
  void drain(Fn&& fn) {
    for (std::size_t c = 0; c < chunks_.size(); ++c) {
      const std::size_t n = std::min(kChunk, size_ - std::min(size_, c * kChunk));
      for (std::size_t i = 0; i < n; ++i) fn(std::move(chunks_[c][i]));
      chunks_[c].reset();
    }
    chunks_.clear();
    size_ = 0;
  }

 private:
  std::vector<std::unique_ptr<T[]>> chunks_;
  std::size_t size_ = 0;
};

}  // namespace memtrail::detail
