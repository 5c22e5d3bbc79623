// Tensor lifetimes against TF.js's documented results
// (../shared/reference/dl4j-workspaces-tfjs-tidy.md §2): memory() counting,
// views on one buffer, tidy with returned containers, nesting, exceptions,
// keep vs dispose, use after dispose, profile() records, and the ops' values.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <optional>
#include <tuple>
#include <vector>

#include "memtrail/tensor/memory.hpp"
#include "memtrail/tensor/ops.hpp"
#include "memtrail/tensor/tidy.hpp"

namespace {

using namespace memtrail::tensor;

// memory() relative to the test's start: the counters are process-wide.
struct Delta {
  MemoryInfo base = memory();
  std::int64_t tensors() const { return memory().num_tensors - (std::int64_t)base.num_tensors; }
  std::int64_t buffers() const {
    return memory().num_data_buffers - (std::int64_t)base.num_data_buffers;
  }
  std::int64_t bytes() const { return memory().num_bytes - (std::int64_t)base.num_bytes; }
};

TEST(Tensor, ReshapeAndCloneShareOneBufferAndCountBytesPerTensor) {
  TensorPool pool;
  UsePool use(pool);
  Delta d;
  Tensor x = Tensor::from({1, 2, 3, 4}, {4});  // 16 bytes
  Tensor r = x.reshape({2, 2});
  Tensor c = x.clone();
  EXPECT_EQ(d.tensors(), 3);
  EXPECT_EQ(d.buffers(), 1);
  EXPECT_EQ(d.bytes(), 48);  // TF.js: numBytes is logical, per tensor
  EXPECT_EQ(pool.bytes_in_use(), 16u);
  x.dispose();
  EXPECT_EQ(r.values(), (std::vector<float>{1, 2, 3, 4}));  // the view stays valid
  EXPECT_EQ(d.tensors(), 2);
  EXPECT_EQ(d.buffers(), 1);
  r.dispose();
  c.dispose();
  EXPECT_EQ(d.tensors(), 0);
  EXPECT_EQ(d.buffers(), 0);
  EXPECT_EQ(d.bytes(), 0);
  EXPECT_EQ(pool.bytes_in_use(), 0u);
}

TEST(Tensor, DisposeIsIdempotentAndUseAfterDisposeNamesTheSite) {
  TensorPool pool;
  UsePool use(pool);
  Delta d;
  Tensor x = Tensor::zeros({2, 3});
  const int line = __LINE__ - 1;
  EXPECT_FALSE(x.is_disposed());
  x.dispose();
  x.dispose();
  EXPECT_TRUE(x.is_disposed());
  EXPECT_EQ(d.tensors(), 0);
  EXPECT_EQ(x.shape(), (Shape{2, 3}));  // the shape stays readable
  try {
    (void)x.values();
    FAIL() << "no throw";
  } catch (const TensorDisposedError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("Tensor is disposed (allocated at ", 0), 0u) << what;
    EXPECT_NE(what.find("test_tensor.cpp:" + std::to_string(line)), std::string::npos) << what;
  }
  EXPECT_THROW(relu(x), TensorDisposedError);
  EXPECT_THROW(x.reshape({6}), TensorDisposedError);
  EXPECT_THROW(x.clone(), TensorDisposedError);
  EXPECT_THROW(keep(x), TensorDisposedError);
}

TEST(Tidy, DisposesAllButTheReturnedTensorsInNestedContainers) {
  TensorPool pool;
  UsePool use(pool);
  Delta d;
  Tensor outside = Tensor::zeros({1});
  using Result = std::tuple<std::vector<Tensor>, std::map<std::string, std::optional<Tensor>>>;
  Tensor tmp;
  Result r = tidy("containers", [&] {
    Tensor a = Tensor::zeros({2});
    Tensor b = Tensor::zeros({3});
    tmp = Tensor::zeros({4});
    Result out;
    std::get<0>(out).push_back(a);
    std::get<1>(out)["b"] = b;
    std::get<1>(out)["none"] = std::nullopt;
    std::get<1>(out)["outside"] = outside;  // not created here: untouched
    return out;
  });
  EXPECT_TRUE(tmp.is_disposed());
  EXPECT_FALSE(std::get<0>(r)[0].is_disposed());
  EXPECT_FALSE(std::get<1>(r)["b"]->is_disposed());
  EXPECT_FALSE(outside.is_disposed());
  EXPECT_EQ(d.tensors(), 3);
  EXPECT_EQ(d.bytes(), (1 + 2 + 3) * 4);
  dispose(r);
  outside.dispose();
  EXPECT_EQ(d.tensors(), 0);
  EXPECT_EQ(pool.bytes_in_use(), 0u);
}

TEST(Tidy, NestedTidyHandsResultsToTheEnclosingScope) {
  TensorPool pool;
  UsePool use(pool);
  Delta d;
  Tensor inner_result, inner_temp;
  Tensor outer = tidy("outer", [&] {
    inner_result = tidy("inner", [&] {
      inner_temp = Tensor::zeros({5});
      return Tensor::zeros({2});
    });
    EXPECT_TRUE(inner_temp.is_disposed());
    EXPECT_FALSE(inner_result.is_disposed());
    return Tensor::zeros({1});
  });
  // The inner result passed to "outer", which did not return it.
  EXPECT_TRUE(inner_result.is_disposed());
  EXPECT_FALSE(outer.is_disposed());
  EXPECT_EQ(d.tensors(), 1);
  outer.dispose();
  EXPECT_EQ(d.tensors(), 0);
}

TEST(Tidy, AnExceptionStillDisposesTheScope) {
  TensorPool pool;
  UsePool use(pool);
  Delta d;
  Tensor made;
  EXPECT_THROW(tidy("throws",
                    [&]() -> Tensor {
                      made = Tensor::zeros({8});
                      throw std::runtime_error("boom");
                    }),
               std::runtime_error);
  EXPECT_TRUE(made.is_disposed());
  EXPECT_EQ(d.tensors(), 0);
  EXPECT_EQ(pool.bytes_in_use(), 0u);
  // The scope stack is whole again: a new tidy works and tracks.
  Tensor t;
  tidy("after", [&] { t = Tensor::zeros({1}); });
  EXPECT_TRUE(t.is_disposed());
}

TEST(Tidy, KeepProtectsFromEveryScopeButNotFromDispose) {
  TensorPool pool;
  UsePool use(pool);
  Delta d;
  Tensor kept;
  tidy("outer", [&] {
    tidy("inner", [&] { kept = keep(Tensor::zeros({3})); });
    EXPECT_FALSE(kept.is_disposed());
  });
  EXPECT_FALSE(kept.is_disposed());
  EXPECT_TRUE(kept.is_kept());
  EXPECT_EQ(d.tensors(), 1);
  kept.dispose();
  EXPECT_TRUE(kept.is_disposed());
  EXPECT_EQ(d.tensors(), 0);
}

TEST(Tidy, TensorsOutsideAnyScopeAreUntracked) {
  TensorPool pool;
  UsePool use(pool);
  Tensor global = Tensor::zeros({1});
  tidy("unrelated", [] {});
  EXPECT_FALSE(global.is_disposed());
  global.dispose();
}

TEST(Memory, DroppedUndisposedTensorsMakeTheCountsUnreliable) {
  TensorPool pool;
  UsePool use(pool);
  const MemoryInfo before = memory();
  Tensor t = Tensor::zeros({1});
  t.dispose();
  EXPECT_EQ(memory().reasons.size(), before.reasons.size());
  { Tensor lost = Tensor::zeros({2}); }  // last handle gone, never disposed
  MemoryInfo m = memory();
  EXPECT_TRUE(m.unreliable);
  ASSERT_EQ(m.reasons.size(), 1u);
  EXPECT_NE(m.reasons[0].find("without dispose()"), std::string::npos) << m.reasons[0];
  EXPECT_EQ(m.num_tensors, before.num_tensors + 1);  // still counted: it leaked
  EXPECT_EQ(pool.bytes_in_use(), 8u);
}

TEST(Profile, ReproducesTheDocumentedExample) {
  // TF.js: x = tensor1d([1,2,3]); x2 = x.square(); x2.dispose(); x2 =
  // x.square(); x2.dispose(); return x  ->  newBytes 12, newTensors 1,
  // peakBytes 24. square is mul(x, x) here.
  TensorPool pool;
  UsePool use(pool);
  Tensor x;
  ProfileInfo p = profile([&] {
    x = Tensor::from({1, 2, 3}, {3});
    Tensor x2 = mul(x, x);
    x2.dispose();
    x2 = mul(x, x);
    x2.dispose();
  });
  EXPECT_EQ(p.new_bytes, 12);
  EXPECT_EQ(p.new_tensors, 1);
  EXPECT_EQ(p.peak_bytes, static_cast<double>(memory().num_bytes) + 12);
  ASSERT_EQ(p.kernels.size(), 2u);
  EXPECT_EQ(p.kernels[0].name, "Multiply");
  EXPECT_EQ(p.kernels[0].bytes_added, 12);
  EXPECT_EQ(p.kernels[0].tensors_added, 1);
  EXPECT_EQ(p.kernels[0].input_shapes, (std::vector<Shape>{{3}, {3}}));
  EXPECT_EQ(p.kernels[0].output_shapes, (std::vector<Shape>{{3}}));
  x.dispose();
  ProfileInfo empty = profile([] {});
  EXPECT_TRUE(std::isinf(empty.peak_bytes) && empty.peak_bytes < 0);  // -Infinity, as TF.js
}

TEST(Ops, ComputeRealValues) {
  TensorPool pool;
  UsePool use(pool);
  Delta d;
  tidy("ops", [] {
    Tensor a = Tensor::from({1, -2, 3, -4, 5, -6}, {2, 3});
    Tensor b = Tensor::from({1, 2, 3, 4, 5, 6}, {3, 2});
    EXPECT_EQ(add(a, a).values(), (std::vector<float>{2, -4, 6, -8, 10, -12}));
    EXPECT_EQ(mul(a, a).values(), (std::vector<float>{1, 4, 9, 16, 25, 36}));
    EXPECT_EQ(relu(a).values(), (std::vector<float>{1, 0, 3, 0, 5, 0}));
    Tensor m = matmul(a, b);
    EXPECT_EQ(m.shape(), (Shape{2, 2}));
    // [1,-2,3]x[[1,2],[3,4],[5,6]] = [10,12]; [-4,5,-6]x.. = [-19,-24]
    EXPECT_EQ(m.values(), (std::vector<float>{10, 12, -19, -24}));
    Tensor s = sum(a);
    EXPECT_EQ(s.shape(), Shape{});
    EXPECT_EQ(s.values(), (std::vector<float>{-3}));
    std::vector<float> sm = softmax(Tensor::from({0, std::log(3.0f), 1, 1}, {2, 2})).values();
    EXPECT_NEAR(sm[0], 0.25f, 1e-6);
    EXPECT_NEAR(sm[1], 0.75f, 1e-6);
    EXPECT_NEAR(sm[2], 0.5f, 1e-6);
    EXPECT_NEAR(sm[3], 0.5f, 1e-6);
    EXPECT_THROW(add(a, b), std::invalid_argument);
    EXPECT_THROW(matmul(a, a), std::invalid_argument);
  });
  EXPECT_EQ(d.tensors(), 0);
  EXPECT_EQ(pool.bytes_in_use(), 0u);
}

}  // namespace
