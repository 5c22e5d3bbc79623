// TensorPool: where tensor data buffers come from. A traced pool
// (PoolKind::tidy) over any std::pmr::memory_resource: an allocator-stack
// resource (host, caching, BFC, a workspace) becomes its upstream in the
// trace's pool tree; a plain pmr resource is used untraced underneath.
// Each data buffer is one alloc/free event of this pool, so the analyzer's
// leaf-pool figures count tensor bytes once.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory_resource>
#include <string>

#include "memtrail/alloc/resource.hpp"

namespace memtrail::tensor {

class TensorPool : public alloc::Resource {
 public:
  explicit TensorPool(std::pmr::memory_resource* upstream = std::pmr::new_delete_resource(),
                      std::string name = "tensors");
  // Buffers are 64-byte aligned (vector loads). The pool must outlive them.
  void* allocate_buffer(std::size_t bytes);
  void free_buffer(void* p, std::size_t bytes) noexcept;
  std::uint64_t bytes_in_use() const { return in_use_; }
  std::pmr::memory_resource* upstream_resource() const { return upstream_; }

  static constexpr std::size_t kAlignment = 64;

 protected:
  void* do_allocate(std::size_t bytes, std::size_t alignment) override;
  void do_deallocate(void* p, std::size_t bytes, std::size_t alignment) override;

 private:
  std::pmr::memory_resource* upstream_;
  std::atomic<std::uint64_t> in_use_{0};
};

// The pool of a thread without a UsePool: one per process, named "tensors",
// over std::pmr::new_delete_resource().
TensorPool& default_pool();
// This thread's current pool.
TensorPool& current_pool();

// Makes `pool` this thread's current pool until destroyed (nests).
class UsePool {
 public:
  explicit UsePool(TensorPool& pool);
  ~UsePool();
  UsePool(const UsePool&) = delete;
  UsePool& operator=(const UsePool&) = delete;

 private:
  TensorPool* previous_;
};

}  // namespace memtrail::tensor
