// memtrail::tensor costs (docs/BENCHMARKS.md, "Tensors"): create + dispose
// of a 64-float tensor, a tidy scope creating 10 tensors, tracing off and
// on (no stacks / 10-frame stacks), against the plain C++ baseline of a
// std::shared_ptr<std::vector<float>>.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "memtrail/recorder.hpp"
#include "memtrail/tensor/tidy.hpp"

namespace {

using namespace memtrail::tensor;

// Arg: 0 = tracing off, 1 = on without stacks, 2 = on with 10-frame stacks.
struct MaybeTraced {
  std::string path = "/tmp/memtrail-bench-tensor-" + std::to_string(getpid()) + ".mtr";
  bool on;
  explicit MaybeTraced(std::int64_t mode) : on(mode != 0) {
    if (!on) return;
    memtrail::RecorderOptions o;
    o.output = path;
    o.stacks = mode == 2;
    o.stack_depth = 10;
    o.sample_interval_ms = 0;
    if (!memtrail::start(o)) std::abort();
  }
  ~MaybeTraced() {
    if (!on) return;
    memtrail::stop();
    std::remove(path.c_str());
  }
};

const char* label(std::int64_t mode) {
  return mode == 0 ? "untraced" : mode == 1 ? "traced, no stacks" : "traced, stacks (10 frames)";
}

void BM_SharedVectorCreateDrop(benchmark::State& state) {
  for (auto _ : state) {
    auto v = std::make_shared<std::vector<float>>(64);
    benchmark::DoNotOptimize(v->data());
  }
}
BENCHMARK(BM_SharedVectorCreateDrop);

void BM_TensorCreateDispose(benchmark::State& state) {
  TensorPool pool;
  UsePool use(pool);
  MaybeTraced traced(state.range(0));
  for (auto _ : state) {
    Tensor t = Tensor::zeros({64});
    benchmark::DoNotOptimize(t.id());
    t.dispose();
  }
  state.SetLabel(label(state.range(0)));
}
BENCHMARK(BM_TensorCreateDispose)->Arg(0)->Arg(1)->Arg(2);

void BM_SharedVectorScopeOf10(benchmark::State& state) {
  for (auto _ : state) {
    std::vector<std::shared_ptr<std::vector<float>>> scope;
    for (int i = 0; i < 10; ++i) scope.push_back(std::make_shared<std::vector<float>>(64));
    benchmark::DoNotOptimize(scope.data());
  }
}
BENCHMARK(BM_SharedVectorScopeOf10);

void BM_TidyOf10(benchmark::State& state) {
  TensorPool pool;
  UsePool use(pool);
  MaybeTraced traced(state.range(0));
  for (auto _ : state) {
    tidy("bench", [] {
      for (int i = 0; i < 10; ++i) benchmark::DoNotOptimize(Tensor::zeros({64}).id());
    });
  }
  state.SetLabel(label(state.range(0)));
}
BENCHMARK(BM_TidyOf10)->Arg(0)->Arg(1)->Arg(2);

}  // namespace

BENCHMARK_MAIN();
