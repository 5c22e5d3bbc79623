// memtrail::tensor: TF.js-style tensor lifetimes over the allocator stack.
//
// A Tensor is a handle (copies refer to the same tensor, as JS references
// do) to a shape, a dtype and a reference-counted data buffer taken from a
// TensorPool. Views (reshape, clone) share the buffer; dispose() releases the
// tensor's reference and the buffer goes back to the pool with the last one.
// As in TF.js, dropping every handle does NOT free anything: a tensor lives
// until dispose() or the end of the tidy() scope that tracks it, so a
// forgotten dispose is a leak the trace shows (and memory() says so).
//
//   TensorPool pool(&workspace_or_any_resource, "activations");
//   UsePool use(pool);                      // this thread's tensors come from it
//   Tensor x = Tensor::from({1, 2, 3, 4}, {2, 2});
//   Tensor y = tidy("step", [&] { return relu(matmul(x, x)); });
//   y.dispose();
//
// Threads: the counters of memory() are process-wide; tidy scopes and the
// current pool are per thread. Using a disposed tensor throws
// TensorDisposedError ("Tensor is disposed (allocated at FILE:LINE)").
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "memtrail/tensor/tensor_pool.hpp"

namespace memtrail::tensor {

enum class DType : std::uint8_t { float32, int32 };
std::size_t dtype_size(DType d);
std::string_view to_string(DType d);

using Shape = std::vector<std::int64_t>;
std::string shape_string(const Shape& s);  // "[2,3]"; a scalar is "[]"
std::size_t element_count(const Shape& s);

// Where a tensor was made: the caller's file, line and function, taken by
// default arguments. Not std::source_location: clang 14 with libstdc++ 12
// has none, and the fuzz build compiles this library with clang.
struct Site {
  const char* file = "";
  unsigned line_number = 0;
  const char* function = "";
  static constexpr Site current(const char* file = __builtin_FILE(),
                                unsigned line = __builtin_LINE(),
                                const char* function = __builtin_FUNCTION()) noexcept {
    return Site{file, line, function};
  }
  const char* file_name() const { return file; }
  unsigned line() const { return line_number; }
  const char* function_name() const { return function; }
};

namespace detail {
struct TensorImpl;
}

class TensorDisposedError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

class Tensor {
 public:
  // Zero-filled tensor in the current pool (UsePool, else default_pool()).
  static Tensor zeros(const Shape& shape, DType dtype = DType::float32,
                      Site site = Site::current());
  // float32 tensor holding `values` (their count must match the shape).
  static Tensor from(const std::vector<float>& values, const Shape& shape,
                     Site site = Site::current());

  Tensor() = default;  // no tensor: every accessor throws std::logic_error

  const Shape& shape() const;
  DType dtype() const;
  std::size_t size() const;   // elements
  std::size_t bytes() const;  // logical bytes (what TF.js's numBytes counts)
  // Unique per tensor (never reused); 0 for an empty handle.
  std::uint64_t id() const;
  bool is_disposed() const;
  bool is_kept() const;
  // "file:line" of the call that created the tensor.
  std::string allocation_site() const;

  // Element values (float32 converted from int32). Throws when disposed.
  std::vector<float> values() const;
  const float* data() const;  // float32 only
  float* mutable_data();      // float32 only

  // Views: a new tensor on the same data buffer (TF.js Reshape / Identity).
  Tensor reshape(const Shape& shape, Site site = Site::current()) const;
  Tensor clone(Site site = Site::current()) const;

  // Releases this tensor's reference to its buffer. Idempotent.
  void dispose() const noexcept;

  bool operator==(const Tensor& o) const { return impl_ == o.impl_; }

  // Internal: for the library's own files.
  explicit Tensor(std::shared_ptr<detail::TensorImpl> impl) : impl_(std::move(impl)) {}
  const std::shared_ptr<detail::TensorImpl>& impl() const { return impl_; }

 private:
  detail::TensorImpl& live() const;  // throws when empty or disposed
  std::shared_ptr<detail::TensorImpl> impl_;
};

// Protects `t` from every tidy scope (not from an explicit dispose()).
// Returns `t`. Recorded as a `mark` event "tensor.keep" at the caller.
Tensor keep(const Tensor& t);

// Where a rejected donation's warning goes (default: stderr, one line
// "memtrail: UserWarning: ..."). Returns the previous handler.
using WarningHandler = void (*)(const std::string& message);
WarningHandler set_warning_handler(WarningHandler handler);

}  // namespace memtrail::tensor
