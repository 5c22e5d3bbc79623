// The tensor engine's state (TF.js's ENGINE): the counters of memory(), the
// per-thread tidy scopes, the active profile. One mutex guards the
// process-wide part; scopes and profiles are per thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "memtrail/tensor/memory.hpp"
#include "memtrail/tensor/tensor.hpp"
#include "memtrail/tensor/tensor_pool.hpp"

namespace memtrail::tensor::detail {

struct DataBuffer {
  TensorPool* pool = nullptr;
  void* data = nullptr;
  std::size_t bytes = 0;
  int refs = 0;  // tensors not yet disposed that use it
};

struct TensorImpl {
  Shape shape;
  DType dtype = DType::float32;
  DataBuffer* buffer = nullptr;
  std::uint64_t id = 0;
  std::uint64_t scope = 0;  // uid of the tidy scope tracking it, 0 = none
  bool disposed = false;
  bool kept = false;
  Site site;
  std::size_t bytes() const { return element_count(shape) * dtype_size(dtype); }
  ~TensorImpl();  // a tensor never disposed becomes an orphan (memory())
};

struct Counters {
  std::uint64_t tensors = 0, buffers = 0, bytes = 0;
};

// The mutex and counters; everything below takes the lock itself.
struct Engine {
  std::mutex mutex;
  Counters counters;
  std::uint64_t next_tensor_id = 1;
  std::uint64_t next_scope_uid = 1;
  // Tensors whose last handle went away undisposed. Atomic, not under the
  // mutex: a TensorImpl may die while the engine holds it (a scope's list).
  std::atomic<std::uint64_t> orphans{0};
};
Engine& engine();

// A new tensor on a new buffer (`buffer` null) or sharing `buffer` (+1 ref),
// tracked by this thread's innermost tidy scope.
std::shared_ptr<TensorImpl> make_tensor(const Shape& shape, DType dtype, DataBuffer* buffer,
                                        TensorPool& pool, const Site& site);
// Disposes (idempotent): -1 tensor, the buffer freed at its last reference.
void dispose_tensor(TensorImpl& t) noexcept;
// Ends `from` as a tensor and hands its buffer to a new output tensor (the
// donation): no alloc, no free.
std::shared_ptr<TensorImpl> take_over(TensorImpl& from, const Shape& shape, const Site& site);

Counters counters();
// Adds a new tensor to this thread's innermost tidy scope (tensor_tidy.cpp).
void track_in_scope(const std::shared_ptr<TensorImpl>& t);
// Kernel bookkeeping for profile(): before = counters at the op's start.
void record_kernel(const char* name, const Counters& before, std::vector<Shape> inputs,
                   std::vector<Shape> outputs);

// Throws TensorDisposedError / std::logic_error (empty handle).
[[noreturn]] void throw_disposed(const TensorImpl& t);

// The tensor behind a handle; throws when it is empty or disposed.
TensorImpl& live_impl(const Tensor& t);
// Trace scope id of this thread's innermost tidy, 0 = none (tensor_tidy.cpp).
std::uint32_t current_scope_id();

// Sends a warning to the handler of set_warning_handler().
void warn(const std::string& message);

std::string site_string(const Site& site);

}  // namespace memtrail::tensor::detail
