// Recycles the nodes of a pool's ordered sets (BestFitBins' large sizes,
// expandable segments' unmapped ranges), so a cached alloc+free pair never
// calls the system allocator. Not thread-safe: used
// under the owning pool's lock. Nodes go back to the system when the cache
// is destroyed (after the containers using it).
#pragma once

#include <cstddef>
#include <new>

namespace memtrail::alloc::detail {

class NodeCache {
 public:
  NodeCache() = default;
  NodeCache(const NodeCache&) = delete;
  NodeCache& operator=(const NodeCache&) = delete;
  ~NodeCache() {
    for (void*& head : lists_)
      while (head) {
        void* next = *static_cast<void**>(head);
        ::operator delete(head);
        head = next;
      }
  }

  void* get(std::size_t bytes) {
    if (bytes > kMaxNode) return ::operator new(bytes);
    void*& head = lists_[index(bytes)];
    if (!head) return ::operator new(index(bytes) * kGranule);
    void* p = head;
    head = *static_cast<void**>(p);
    return p;
  }
  void put(void* p, std::size_t bytes) noexcept {
    if (bytes > kMaxNode) return ::operator delete(p);
    void*& head = lists_[index(bytes)];
    *static_cast<void**>(p) = head;
    head = p;
  }

 private:
  static constexpr std::size_t kGranule = 16, kMaxNode = 128;
  static std::size_t index(std::size_t bytes) { return (bytes + kGranule - 1) / kGranule; }
  void* lists_[kMaxNode / kGranule + 1] = {};
};

// Standard allocator over a NodeCache: single nodes are recycled, arrays
// (hash buckets) go to operator new.
template <typename T>
struct NodeAllocator {
  using value_type = T;
  NodeCache* cache;
  explicit NodeAllocator(NodeCache* c) noexcept : cache(c) {}
  template <typename U>
  NodeAllocator(const NodeAllocator<U>& other) noexcept : cache(other.cache) {}
  T* allocate(std::size_t n) {
    return static_cast<T*>(n == 1 ? cache->get(sizeof(T)) : ::operator new(n * sizeof(T)));
  }
  void deallocate(T* p, std::size_t n) noexcept {
    if (n == 1)
      cache->put(p, sizeof(T));
    else
      ::operator delete(p);
  }
  template <typename U>
  bool operator==(const NodeAllocator<U>& o) const noexcept {
    return cache == o.cache;
  }
};

}  // namespace memtrail::alloc::detail
