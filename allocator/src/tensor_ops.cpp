// The op set and donation (ops.hpp). Each op computes into a scratch
// vector first, so an output that took over a donated input's buffer never
// reads what it already wrote.
#include "memtrail/tensor/ops.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>

#include "memtrail/recorder.hpp"
#include "tensor_engine.hpp"

namespace memtrail::tensor {
namespace {

using detail::TensorImpl;

TensorImpl& float_input(const char* op, const Tensor& t) {
  TensorImpl& impl = detail::live_impl(t);
  if (impl.dtype != DType::float32)
    throw std::invalid_argument(std::string(op) + ": float32 tensors only, got " +
                                std::string(to_string(impl.dtype)));
  return impl;
}

// Why `donated` cannot hold an output of `shape` (empty: it can).
std::string refusal(const TensorImpl& donated, const Shape& shape) {
  if (donated.dtype != DType::float32) return "dtype";
  if (donated.buffer->bytes != element_count(shape) * 4) return "size";
  if (donated.buffer->refs != 1) return "shared";
  return {};
}

void record_donation(EventKind kind, const TensorImpl& t, std::uint64_t aux) {
  Event e;
  e.kind = kind;
  e.pool = t.buffer->pool->pool_id();
  e.address = reinterpret_cast<std::uintptr_t>(t.buffer->data);
  e.size = t.buffer->bytes;
  e.aux = aux;
  record(e);
}

// The op's output: the donated buffer when it fits, else a new one.
Tensor make_output(const Shape& shape, const Donation& d, const Site& site) {
  if (d.tensor.impl()) {
    TensorImpl& donated = detail::live_impl(d.tensor);
    if (refusal(donated, shape).empty()) {
      record_donation(EventKind::donate, donated, detail::current_scope_id());
      return Tensor(detail::take_over(donated, shape, site));
    }
    const std::string warning = "Some donated buffers were not usable: ShapedArray(" +
                                std::string(to_string(donated.dtype)) +
                                shape_string(donated.shape) + ").";
    if (tracing()) record_donation(EventKind::donate_rejected, donated, intern_string(warning));
    detail::warn(warning);
  }
  return Tensor(detail::make_tensor(shape, DType::float32, nullptr, current_pool(), site));
}

Tensor finish(const char* kernel, const detail::Counters& before, std::vector<Shape> inputs,
              const Shape& shape, const std::vector<float>& result, const Donation& d,
              const Site& site) {
  Tensor out = make_output(shape, d, site);
  if (!result.empty())
    std::memcpy(out.mutable_data(), result.data(), result.size() * sizeof(float));
  detail::record_kernel(kernel, before, std::move(inputs), {shape});
  return out;
}

Tensor elementwise(const char* op, const char* kernel, const Tensor& a, const Tensor& b,
                   const Donation& d, const Site& site, float (*f)(float, float)) {
  const detail::Counters before = detail::counters();
  TensorImpl& x = float_input(op, a);
  TensorImpl& y = float_input(op, b);
  if (x.shape != y.shape)
    throw std::invalid_argument(std::string(op) + ": shapes " + shape_string(x.shape) + " and " +
                                shape_string(y.shape) + " differ");
  const float* px = static_cast<const float*>(x.buffer->data);
  const float* py = static_cast<const float*>(y.buffer->data);
  std::vector<float> r(element_count(x.shape));
  for (std::size_t i = 0; i < r.size(); ++i) r[i] = f(px[i], py[i]);
  return finish(kernel, before, {x.shape, y.shape}, x.shape, r, d, site);
}

}  // namespace

Tensor add(const Tensor& a, const Tensor& b, Donation d, Site site) {
  MEMTRAIL_ALLOCATOR_ENTRY();
  return elementwise("add", "Add", a, b, d, site, [](float x, float y) { return x + y; });
}

Tensor mul(const Tensor& a, const Tensor& b, Donation d, Site site) {
  MEMTRAIL_ALLOCATOR_ENTRY();
  return elementwise("mul", "Multiply", a, b, d, site, [](float x, float y) { return x * y; });
}

Tensor matmul(const Tensor& a, const Tensor& b, Donation d, Site site) {
  MEMTRAIL_ALLOCATOR_ENTRY();
  const detail::Counters before = detail::counters();
  TensorImpl& x = float_input("matmul", a);
  TensorImpl& y = float_input("matmul", b);
  if (x.shape.size() != 2 || y.shape.size() != 2 || x.shape[1] != y.shape[0])
    throw std::invalid_argument("matmul: shapes " + shape_string(x.shape) + " and " +
                                shape_string(y.shape) + " do not multiply ([m,k] x [k,n])");
  const std::size_t m = x.shape[0], k = x.shape[1], n = y.shape[1];
  const float* px = static_cast<const float*>(x.buffer->data);
  const float* py = static_cast<const float*>(y.buffer->data);
  std::vector<float> r(m * n, 0.0f);
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t p = 0; p < k; ++p)
      for (std::size_t j = 0; j < n; ++j) r[i * n + j] += px[i * k + p] * py[p * n + j];
  const Shape shape{static_cast<std::int64_t>(m), static_cast<std::int64_t>(n)};
  return finish("BatchMatMul", before, {x.shape, y.shape}, shape, r, d, site);
}

Tensor relu(const Tensor& a, Donation d, Site site) {
  MEMTRAIL_ALLOCATOR_ENTRY();
  const detail::Counters before = detail::counters();
  TensorImpl& x = float_input("relu", a);
  const float* px = static_cast<const float*>(x.buffer->data);
  std::vector<float> r(element_count(x.shape));
  for (std::size_t i = 0; i < r.size(); ++i) r[i] = std::max(px[i], 0.0f);
  return finish("Relu", before, {x.shape}, x.shape, r, d, site);
}

Tensor sum(const Tensor& a, Site site) {
  MEMTRAIL_ALLOCATOR_ENTRY();
  const detail::Counters before = detail::counters();
  TensorImpl& x = float_input("sum", a);
  const float* px = static_cast<const float*>(x.buffer->data);
  double total = 0;  // accumulate wide: the result is one float
  for (std::size_t i = 0, n = element_count(x.shape); i < n; ++i) total += px[i];
  return finish("Sum", before, {x.shape}, Shape{}, {static_cast<float>(total)}, {}, site);
}

Tensor softmax(const Tensor& a, Donation d, Site site) {
  MEMTRAIL_ALLOCATOR_ENTRY();
  const detail::Counters before = detail::counters();
  TensorImpl& x = float_input("softmax", a);
  if (x.shape.empty()) throw std::invalid_argument("softmax: needs at least one axis, got []");
  const std::size_t n = element_count(x.shape);
  const std::size_t width = static_cast<std::size_t>(x.shape.back());
  const float* px = static_cast<const float*>(x.buffer->data);
  std::vector<float> r(n);
  for (std::size_t row = 0; width && row < n / width; ++row) {
    const float* in = px + row * width;
    float* out = r.data() + row * width;
    const float top = *std::max_element(in, in + width);  // exp of <= 0: no overflow
    double total = 0;
    for (std::size_t i = 0; i < width; ++i) total += out[i] = std::exp(in[i] - top);
    for (std::size_t i = 0; i < width; ++i) out[i] = static_cast<float>(out[i] / total);
  }
  return finish("Softmax", before, {x.shape}, x.shape, r, d, site);
}

}  // namespace memtrail::tensor
