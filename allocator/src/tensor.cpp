// Tensor handles (tensor.hpp): factories, accessors, views, dispose.
#include "memtrail/tensor/tensor.hpp"

#include <cstdio>
#include <cstring>

#include "memtrail/recorder.hpp"
#include "tensor_engine.hpp"

namespace memtrail::tensor {

std::size_t dtype_size(DType d) {
  switch (d) {
    case DType::float32:
    case DType::int32:
      return 4;
  }
  return 4;
}

std::string_view to_string(DType d) {
  return d == DType::int32 ? "int32" : "float32";
}

std::string shape_string(const Shape& s) {
  std::string out = "[";
  for (std::size_t i = 0; i < s.size(); ++i) out += (i ? "," : "") + std::to_string(s[i]);
  return out + "]";
}

std::size_t element_count(const Shape& s) {
  std::size_t n = 1;
  for (std::int64_t d : s) {
    if (d < 0) throw std::invalid_argument("negative dimension in shape " + shape_string(s));
    n *= static_cast<std::size_t>(d);
  }
  return n;
}

Tensor Tensor::zeros(const Shape& shape, DType dtype, Site site) {
  MEMTRAIL_ALLOCATOR_ENTRY();  // the buffer's alloc event is at our caller
  element_count(shape);        // validates before anything is allocated
  return Tensor(detail::make_tensor(shape, dtype, nullptr, current_pool(), site));
}

Tensor Tensor::from(const std::vector<float>& values, const Shape& shape, Site site) {
  MEMTRAIL_ALLOCATOR_ENTRY();
  if (values.size() != element_count(shape))
    throw std::invalid_argument("Tensor::from: " + std::to_string(values.size()) +
                                " values for shape " + shape_string(shape));
  Tensor t(detail::make_tensor(shape, DType::float32, nullptr, current_pool(), site));
  if (!values.empty()) std::memcpy(t.impl_->buffer->data, values.data(), values.size() * 4);
  return t;
}

detail::TensorImpl& Tensor::live() const {
  return detail::live_impl(*this);
}

detail::TensorImpl& detail::live_impl(const Tensor& t) {
  if (!t.impl()) throw std::logic_error("no tensor (an empty Tensor handle)");
  if (t.impl()->disposed) throw_disposed(*t.impl());
  return *t.impl();
}

// Shape, dtype and identity stay readable after dispose (TF.js: t.shape).
const Shape& Tensor::shape() const {
  if (!impl_) throw std::logic_error("no tensor (an empty Tensor handle)");
  return impl_->shape;
}
DType Tensor::dtype() const {
  if (!impl_) throw std::logic_error("no tensor (an empty Tensor handle)");
  return impl_->dtype;
}
std::size_t Tensor::size() const {
  return element_count(shape());
}
std::size_t Tensor::bytes() const {
  return size() * dtype_size(dtype());
}
std::uint64_t Tensor::id() const {
  return impl_ ? impl_->id : 0;
}
bool Tensor::is_disposed() const {
  if (!impl_) return true;
  std::lock_guard lock(detail::engine().mutex);
  return impl_->disposed;
}
bool Tensor::is_kept() const {
  return impl_ && impl_->kept;
}
std::string Tensor::allocation_site() const {
  return impl_ ? detail::site_string(impl_->site) : std::string();
}

std::vector<float> Tensor::values() const {
  detail::TensorImpl& t = live();
  std::vector<float> out(element_count(t.shape));
  if (t.dtype == DType::float32) {
    if (!out.empty()) std::memcpy(out.data(), t.buffer->data, out.size() * 4);
  } else {
    const auto* p = static_cast<const std::int32_t*>(t.buffer->data);
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<float>(p[i]);
  }
  return out;
}

const float* Tensor::data() const {
  detail::TensorImpl& t = live();
  if (t.dtype != DType::float32) throw std::logic_error("data(): tensor is not float32");
  return static_cast<const float*>(t.buffer->data);
}

float* Tensor::mutable_data() {
  return const_cast<float*>(data());
}

Tensor Tensor::reshape(const Shape& shape, Site site) const {
  detail::TensorImpl& t = live();
  if (element_count(shape) != element_count(t.shape))
    throw std::invalid_argument("reshape: cannot reshape " + shape_string(t.shape) + " to " +
                                shape_string(shape));
  const detail::Counters before = detail::counters();
  Tensor out(detail::make_tensor(shape, t.dtype, t.buffer, *t.buffer->pool, site));
  detail::record_kernel("Reshape", before, {t.shape}, {shape});
  return out;
}

Tensor Tensor::clone(Site site) const {
  detail::TensorImpl& t = live();
  const detail::Counters before = detail::counters();
  Tensor out(detail::make_tensor(t.shape, t.dtype, t.buffer, *t.buffer->pool, site));
  detail::record_kernel("Identity", before, {t.shape}, {t.shape});
  return out;
}

void Tensor::dispose() const noexcept {
  if (impl_) detail::dispose_tensor(*impl_);
}

namespace {
void print_warning(const std::string& message) {
  std::fprintf(stderr, "memtrail: UserWarning: %s\n", message.c_str());
}
std::atomic<WarningHandler> g_warning{print_warning};
}  // namespace

WarningHandler set_warning_handler(WarningHandler handler) {
  return g_warning.exchange(handler ? handler : print_warning);
}

namespace detail {
void warn(const std::string& message) {
  g_warning.load()(message);
}
}  // namespace detail

}  // namespace memtrail::tensor
