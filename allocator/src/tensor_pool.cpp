// TensorPool (tensor_pool.hpp): one traced alloc/free per tensor data buffer.
#include "memtrail/tensor/tensor_pool.hpp"

#include "memtrail/recorder.hpp"

namespace memtrail::tensor {
namespace {

const alloc::Resource* traced(std::pmr::memory_resource* r) {
  return dynamic_cast<const alloc::Resource*>(r);
}

MemorySpace space_of(std::pmr::memory_resource* r) {
  const alloc::Resource* t = traced(r);
  return t ? t->space() : MemorySpace::host;
}

thread_local TensorPool* t_current = nullptr;

}  // namespace

TensorPool::TensorPool(std::pmr::memory_resource* upstream, std::string name)
    : Resource(std::move(name), space_of(upstream), PoolKind::tidy, traced(upstream),
               traced(upstream) ? traced(upstream)->device() : -1),
      upstream_(upstream) {}

void* TensorPool::allocate_buffer(std::size_t bytes) {
  // At least one byte, so every buffer (a scalar of 0 elements too) has its
  // own address in the trace.
  const std::size_t n = bytes ? bytes : 1;
  void* p = upstream_->allocate(n, kAlignment);
  in_use_.fetch_add(n, std::memory_order_relaxed);
  record_alloc(pool_id(), p, n, bytes);
  return p;
}

void TensorPool::free_buffer(void* p, std::size_t bytes) noexcept {
  const std::size_t n = bytes ? bytes : 1;
  record_free(pool_id(), p, n);
  in_use_.fetch_sub(n, std::memory_order_relaxed);
  upstream_->deallocate(p, n, kAlignment);
}

void* TensorPool::do_allocate(std::size_t bytes, std::size_t /*alignment*/) {
  MEMTRAIL_ALLOCATOR_ENTRY();
  return allocate_buffer(bytes);
}

void TensorPool::do_deallocate(void* p, std::size_t bytes, std::size_t /*alignment*/) {
  free_buffer(p, bytes);
}

TensorPool& default_pool() {
  // Never destroyed: tensors may outlive static destructors' order.
  static TensorPool* pool = new TensorPool(std::pmr::new_delete_resource(), "tensors");
  return *pool;
}

TensorPool& current_pool() {
  return t_current ? *t_current : default_pool();
}

UsePool::UsePool(TensorPool& pool) : previous_(t_current) {
  t_current = &pool;
}
UsePool::~UsePool() {
  t_current = previous_;
}

}  // namespace memtrail::tensor
