// Tensor creation, disposal and buffer hand-over (tensor_engine.hpp).
#include "tensor_engine.hpp"

#include <cstring>

#include "memtrail/recorder.hpp"

namespace memtrail::tensor::detail {

Engine& engine() {
  static Engine* e = new Engine;  // never destroyed: tensors may outlive statics
  return *e;
}

TensorImpl::~TensorImpl() {
  if (!disposed) engine().orphans.fetch_add(1, std::memory_order_relaxed);
}

std::shared_ptr<TensorImpl> make_tensor(const Shape& shape, DType dtype, DataBuffer* buffer,
                                        TensorPool& pool, const Site& site) {
  auto t = std::make_shared<TensorImpl>();
  t->shape = shape;
  t->dtype = dtype;
  t->site = site;
  const std::size_t bytes = t->bytes();
  bool fresh = buffer == nullptr;
  if (fresh) {
    auto b = std::make_unique<DataBuffer>();
    b->pool = &pool;
    b->bytes = bytes;
    b->data = pool.allocate_buffer(bytes);
    std::memset(b->data, 0, bytes);
    buffer = b.release();
  }
  Engine& e = engine();
  {
    std::lock_guard lock(e.mutex);
    ++buffer->refs;
    t->buffer = buffer;
    t->id = e.next_tensor_id++;
    ++e.counters.tensors;
    e.counters.bytes += bytes;
    if (fresh) ++e.counters.buffers;
  }
  track_in_scope(t);
  return t;
}

void dispose_tensor(TensorImpl& t) noexcept {
  Engine& e = engine();
  DataBuffer* to_free = nullptr;
  {
    std::lock_guard lock(e.mutex);
    if (t.disposed) return;
    t.disposed = true;
    --e.counters.tensors;
    e.counters.bytes -= t.bytes();
    if (--t.buffer->refs == 0) {
      to_free = t.buffer;
      --e.counters.buffers;
    }
  }
  if (to_free) {
    to_free->pool->free_buffer(to_free->data, to_free->bytes);
    delete to_free;
  }
}

std::shared_ptr<TensorImpl> take_over(TensorImpl& from, const Shape& shape, const Site& site) {
  DataBuffer* buffer = from.buffer;
  Engine& e = engine();
  {
    // `from` stops being a tensor; its reference passes to the output.
    std::lock_guard lock(e.mutex);
    from.disposed = true;
    --e.counters.tensors;
    e.counters.bytes -= from.bytes();
    --buffer->refs;  // make_tensor adds it back; the buffer count stays
  }
  return make_tensor(shape, from.dtype, buffer, *buffer->pool, site);
}

Counters counters() {
  Engine& e = engine();
  std::lock_guard lock(e.mutex);
  return e.counters;
}

std::string site_string(const Site& site) {
  std::string file = site.file_name();
  return file + ":" + std::to_string(site.line());
}

[[noreturn]] void throw_disposed(const TensorImpl& t) {
  throw TensorDisposedError("Tensor is disposed (allocated at " + site_string(t.site) + " in " +
                            t.site.function_name() + ")");
}

}  // namespace memtrail::tensor::detail
