// The op set: real float32 arithmetic, each op one kernel record in
// profile() (TF.js kernel names). Outputs come from the current pool and
// are tracked by the current tidy scope.
//
// Donation (JAX's donate_argnums): pass donate(x) and the output takes x's
// data buffer when the byte size and dtype match and no view shares it; x
// is then disposed and a `donate` event is recorded (no new alloc). Else a
// `donate_rejected` event (aux: the warning text), the warning
// "Some donated buffers were not usable: ShapedArray(float32[1,3])." goes to
// the warning handler, x stays valid and the output gets a new buffer.
#pragma once

#include "memtrail/tensor/tensor.hpp"

namespace memtrail::tensor {

struct Donation {
  Tensor tensor;  // empty: no donation
};
inline Donation donate(const Tensor& t) {
  return Donation{t};
}

// Same shapes, elementwise ("Add", "Multiply").
Tensor add(const Tensor& a, const Tensor& b, Donation d = {}, Site site = Site::current());
Tensor mul(const Tensor& a, const Tensor& b, Donation d = {}, Site site = Site::current());
// [m,k] x [k,n] -> [m,n] ("BatchMatMul").
Tensor matmul(const Tensor& a, const Tensor& b, Donation d = {}, Site site = Site::current());
// max(x, 0) ("Relu").
Tensor relu(const Tensor& a, Donation d = {}, Site site = Site::current());
// Sum of every element, a scalar (shape []) ("Sum").
Tensor sum(const Tensor& a, Site site = Site::current());
// Softmax over the last axis ("Softmax").
Tensor softmax(const Tensor& a, Donation d = {}, Site site = Site::current());

}  // namespace memtrail::tensor
