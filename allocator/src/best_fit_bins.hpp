// Free blocks in best-fit order (size, address), without a tree for the
// common sizes. Used by CachingPool (one per pool and stream) and BfcPool.
//
// Every size is a multiple of `granule`. Sizes up to granule x classes each
// have an exact class: a min-heap by address (the heap position is stored in
// the node, so any block is removed in O(log n)) and a bit in a two-level
// bitmap. The smallest block >= k is the heap top of the first non-empty
// class >= class(k): a few word operations. Larger sizes, where classes run
// out, sit in an ordered set. Ties go to the lowest address, as in PyTorch's
// (stream, size, ptr) set and tsl's (size, ptr) bins.
//
// The block inserted last is held aside in a one-block "pending" slot and
// enters the classes only when the next one comes: a best-fit query
// compares the slot with the classes' answer, so answers stay exact, while
// the commonest cycle (take a block, split it, free the piece, merge it
// back) touches neither heaps nor bitmap, like glibc's top chunk. Callers
// that walk the blocks in order (expandable segments) turn it off.
//
// Access supplies size(n), addr(n) and pos(n) (a std::uint32_t& the bins
// own while n is inside). Not thread-safe: used under the pool's lock.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <memory>
#include <set>
#include <vector>

#include "node_cache.hpp"

namespace memtrail::alloc::detail {

template <typename Node, typename Access>
class BestFitBins {
 public:
  struct Key {
    std::uint64_t size, addr;
  };
  struct Order {
    using is_transparent = void;
    Access access;
    Key key(const Node& n) const { return {access.size(n), access.addr(n)}; }
    static Key key(const Key& k) { return k; }
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const {
      const Key ka = key(a), kb = key(b);
      return ka.size != kb.size ? ka.size < kb.size : ka.addr < kb.addr;
    }
  };
  using LargeSet = std::set<Node, Order, NodeAllocator<Node>>;

  // granule: a power of two. classes == 0: everything in the ordered set.
  BestFitBins(Access access, std::uint64_t granule, std::uint32_t classes, NodeCache* nodes,
              bool pending_slot = true)
      : pending_enabled_(pending_slot),
        access_(access),
        granule_(granule),
        shift_(static_cast<unsigned>(std::countr_zero(granule))),
        classes_(classes),
        exact_max_(granule * classes),
        large_(Order{access}, NodeAllocator<Node>(nodes)) {}

  BestFitBins(const BestFitBins&) = delete;
  BestFitBins& operator=(const BestFitBins&) = delete;

  bool empty() const { return count_ == 0 && !has_pending_; }
  std::size_t size() const { return count_ + (has_pending_ ? 1 : 0); }

  [[gnu::always_inline]] void insert(Node n) {
    if (!pending_enabled_) [[unlikely]] {
      index_insert(n);
      return;
    }
    if (has_pending_) index_insert(pending_);
    pending_ = n;
    has_pending_ = true;
  }

  [[gnu::always_inline]] void erase(Node n) {
    if (has_pending_ && n == pending_) {
      has_pending_ = false;
      return;
    }
    index_erase(n);
  }

  // True when n is the block in the pending slot: its size and address may
  // then change in place (the slot is not indexed by either), which lets a
  // caller split or grow it without an erase and a re-insert.
  [[gnu::always_inline]] bool is_pending(Node n) const { return has_pending_ && pending_ == n; }

  // The first block in (size, address) order whose size is >= size (> 0),
  // or `none` when there is none.
  // With `is_pending`, also tells whether the answer is the pending block.
  [[gnu::always_inline]] Node first_at_least(std::uint64_t size, Node none,
                                             bool* is_pending = nullptr) const {
    const Node indexed = count_ ? index_first(size, none) : none;
    if (has_pending_) {
      const std::uint64_t pending_size = access_.size(pending_);
      if (pending_size >= size && (indexed == none || pending_size < access_.size(indexed) ||
                                   (pending_size == access_.size(indexed) &&
                                    access_.addr(pending_) < access_.addr(indexed)))) {
        if (is_pending) *is_pending = true;
        return pending_;
      }
    }
    return indexed;
  }

  // Size of the largest block (0 when empty).
  std::uint64_t largest_size() const {
    return std::max(index_largest(), has_pending_ ? access_.size(pending_) : 0);
  }

  // Every block, in (size, address) order.
  void append_sorted(std::vector<Node>& out) const {
    const std::size_t from = out.size();
    index_append_sorted(out);
    if (has_pending_) {
      const Order order{access_};
      out.insert(std::upper_bound(out.begin() + static_cast<std::ptrdiff_t>(from), out.end(),
                                  pending_, order),
                 pending_);
    }
  }

  // The sizes beyond the classes, in order, for callers that walk them
  // (only without the pending slot).
  const LargeSet& large() const { return large_; }

 private:
  // The common cases (a class heap of one or two blocks) are a few inline
  // instructions; heap sifting and the ordered set are out of line.
  [[gnu::always_inline]] void index_insert(Node n) {
    ++count_;
    const std::uint64_t size = access_.size(n);
    if (size > exact_max_) [[unlikely]] {
      large_.insert(n);
      return;
    }
    if (!heaps_) [[unlikely]]
      allocate_classes();
    const std::uint32_t c = class_of(size);
    Heap& heap = heaps_[c];
    const std::uint32_t i = heap.size;
    if (i == heap.capacity) [[unlikely]]
      heap.grow();
    heap.size = i + 1;
    if (i == 0) {
      set_bit(c);
      place(heap, 0, n);
    } else {
      sift_up(heap, i, n);
    }
  }

  [[gnu::always_inline]] void index_erase(Node n) {
    --count_;
    const std::uint64_t size = access_.size(n);
    if (size > exact_max_) [[unlikely]] {
      large_.erase(n);
      return;
    }
    const std::uint32_t c = class_of(size);
    Heap& heap = heaps_[c];
    const std::uint32_t last = --heap.size;
    if (last == 0) {
      clear_bit(c);
      return;
    }
    const std::uint32_t i = access_.pos(n);
    if (i != last) refill(heap, i, heap.data[last]);
  }

  [[gnu::always_inline]] Node index_first(std::uint64_t size, Node none) const {
    if (size <= exact_max_ && heaps_) [[likely]] {
      const std::uint32_t c = class_of_ceil(size);
      const std::uint32_t w = c / 64;
      const std::uint64_t here = words_[w] & (~0ull << (c % 64));
      const std::uint32_t found = here ? w * 64 + static_cast<std::uint32_t>(std::countr_zero(here))
                                       : find_class_above(w + 1);
      if (found != kNoClass) return heaps_[found].data[0];
    }
    return first_large(size, none);
  }

  std::uint64_t index_largest() const {
    if (!large_.empty()) return access_.size(*large_.rbegin());
    if (heaps_)
      for (std::size_t w = words_.size(); w-- > 0;)
        if (words_[w]) return (w * 64 + 63 - std::countl_zero(words_[w]) + 1) * granule_;
    return 0;
  }

  void index_append_sorted(std::vector<Node>& out) const {
    if (heaps_)
      for (std::size_t w = 0; w < words_.size(); ++w)
        for (std::uint64_t bits = words_[w]; bits; bits &= bits - 1) {
          const Heap& heap = heaps_[w * 64 + std::countr_zero(bits)];
          const std::size_t from = out.size();
          out.insert(out.end(), heap.data, heap.data + heap.size);
          std::sort(
              out.begin() + static_cast<std::ptrdiff_t>(from), out.end(),
              [&](const Node& a, const Node& b) { return access_.addr(a) < access_.addr(b); });
        }
    out.insert(out.end(), large_.begin(), large_.end());
  }

  static constexpr std::uint32_t kNoClass = UINT32_MAX;

  // A class's blocks, a binary min-heap by address.
  struct Heap {
    Node* data = nullptr;
    std::uint32_t size = 0, capacity = 0;
    Heap() = default;
    Heap(const Heap&) = delete;
    Heap& operator=(const Heap&) = delete;
    ~Heap() { delete[] data; }
    [[gnu::noinline]] void grow() {
      const std::uint32_t grown = capacity ? 2 * capacity : 4;
      Node* bigger = new Node[grown];
      std::copy(data, data + size, bigger);
      delete[] data;
      data = bigger;
      capacity = grown;
    }
  };

  // Shifts, not divisions: a 64-bit divide by a runtime value costs more
  // than the whole lookup.
  std::uint32_t class_of(std::uint64_t size) const {
    return static_cast<std::uint32_t>((size >> shift_) - 1);
  }
  std::uint32_t class_of_ceil(std::uint64_t size) const {
    return static_cast<std::uint32_t>(((size + granule_ - 1) >> shift_) - 1);
  }

  [[gnu::noinline]] void allocate_classes() {
    heaps_ = std::make_unique<Heap[]>(classes_);
    words_.assign((classes_ + 63) / 64, 0);
    summary_.assign((words_.size() + 63) / 64, 0);
  }

  void set_bit(std::uint32_t c) {
    const std::uint32_t w = c / 64;
    if (!words_[w]) summary_[w / 64] |= 1ull << (w % 64);
    words_[w] |= 1ull << (c % 64);
  }
  void clear_bit(std::uint32_t c) {
    const std::uint32_t w = c / 64;
    words_[w] &= ~(1ull << (c % 64));
    if (!words_[w]) summary_[w / 64] &= ~(1ull << (w % 64));
  }

  // The first non-empty class in bitmap words >= w.
  [[gnu::noinline]] std::uint32_t find_class_above(std::uint32_t w) const {
    for (std::uint32_t s = w / 64; s < summary_.size(); ++s) {
      const std::uint64_t above = summary_[s] & (s == w / 64 ? ~0ull << (w % 64) : ~0ull);
      if (above) {
        const std::uint32_t w2 = s * 64 + static_cast<std::uint32_t>(std::countr_zero(above));
        return w2 * 64 + static_cast<std::uint32_t>(std::countr_zero(words_[w2]));
      }
    }
    return kNoClass;
  }

  [[gnu::noinline]] Node first_large(std::uint64_t size, Node none) const {
    auto it = large_.lower_bound(Key{size, 0});
    return it == large_.end() ? none : *it;
  }

  void place(Heap& heap, std::uint32_t i, Node n) {
    heap.data[i] = n;
    access_.pos(n) = i;
  }
  // Puts n at hole i (heap.size already counts it) moving parents down.
  [[gnu::noinline]] void sift_up(Heap& heap, std::uint32_t i, Node n) {
    const std::uint64_t a = access_.addr(n);
    while (i > 0) {
      const std::uint32_t parent = (i - 1) / 2;
      if (access_.addr(heap.data[parent]) <= a) break;
      place(heap, i, heap.data[parent]);
      i = parent;
    }
    place(heap, i, n);
  }
  // Fills hole i (left by an erased block) with n, up or down as needed.
  [[gnu::noinline]] void refill(Heap& heap, std::uint32_t i, Node n) {
    const std::uint64_t a = access_.addr(n);
    if (i > 0 && a < access_.addr(heap.data[(i - 1) / 2])) {
      sift_up(heap, i, n);
      return;
    }
    for (;;) {
      std::uint32_t child = 2 * i + 1;
      if (child >= heap.size) break;
      if (child + 1 < heap.size &&
          access_.addr(heap.data[child + 1]) < access_.addr(heap.data[child]))
        ++child;
      if (a <= access_.addr(heap.data[child])) break;
      place(heap, i, heap.data[child]);
      i = child;
    }
    place(heap, i, n);
  }

  bool pending_enabled_;
  bool has_pending_ = false;
  Node pending_{};  // inserted last, not in the classes or the set
  Access access_;
  std::uint64_t granule_;
  unsigned shift_;
  std::uint32_t classes_;
  std::uint64_t exact_max_;
  std::size_t count_ = 0;
  std::unique_ptr<Heap[]> heaps_;  // allocated on first use
  std::vector<std::uint64_t> words_, summary_;
  LargeSet large_;
};

}  // namespace memtrail::alloc::detail
