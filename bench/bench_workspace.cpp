// Workspaces against the alternatives, side by side in one run (issue 17):
//  - one 64-byte allocation: a bump in a learned Workspace (Workspace::alloc,
//    and WorkspaceManager::allocate with its checked WorkspaceBuffer) vs
//    glibc malloc and std::pmr::monotonic_buffer_resource; every one releases
//    its memory each 1024 allocations (a cycle), as a loop body would;
//  - one step of a training-like loop (the 7 arrays of samples/workspaces,
//    5376 bytes, each touched) from malloc vs from a workspace;
//  - that step with tracing on (no stacks / 10-frame stacks).
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory_resource>
#include <string>
#include <vector>

#include "memtrail/alloc/host_resources.hpp"
#include "memtrail/alloc/workspace.hpp"
#include "memtrail/alloc/workspace_manager.hpp"
#include "memtrail/recorder.hpp"
#include "traced_session.hpp"

namespace {

using namespace memtrail::alloc;

constexpr int kPerCycle = 1024;
constexpr std::size_t kSize = 64;
const WorkspaceConfiguration kBumpConfig =
    WorkspaceConfiguration::parse("initialSize:" + std::to_string(kPerCycle * kSize) +
                                  ",policyAllocation:STRICT,policyLearning:NONE");

void BM_WorkspaceBump(benchmark::State& state) {
  SystemHeapResource heap;
  Workspace ws(heap, kBumpConfig, "bump");
  ws.enter();
  int n = 0;
  for (auto _ : state) {
    void* p = ws.alloc(kSize);
    benchmark::DoNotOptimize(p);
    if (++n == kPerCycle) {
      ws.close();
      ws.enter();
      n = 0;
    }
  }
  ws.close();
}
BENCHMARK(BM_WorkspaceBump);

void BM_WorkspaceManagerAllocate(benchmark::State& state) {
  SystemHeapResource heap;
  WorkspaceManager manager(&heap);
  auto active = manager.get_and_activate(kBumpConfig, "bump");
  int n = 0;
  for (auto _ : state) {
    char* p = manager.allocate(kSize).as<char>();  // the generation check included
    benchmark::DoNotOptimize(p);
    if (++n == kPerCycle) {
      active.close();
      active = manager.get_and_activate(kBumpConfig, "bump");
      n = 0;
    }
  }
}
BENCHMARK(BM_WorkspaceManagerAllocate);

void BM_MallocCycle(benchmark::State& state) {
  std::vector<void*> live(kPerCycle);
  int n = 0;
  for (auto _ : state) {
    live[n] = std::malloc(kSize);
    benchmark::DoNotOptimize(live[n]);
    if (++n == kPerCycle) {
      for (void* p : live) std::free(p);
      n = 0;
    }
  }
  for (int i = 0; i < n; ++i) std::free(live[i]);
}
BENCHMARK(BM_MallocCycle);

void BM_MonotonicBuffer(benchmark::State& state) {
  std::vector<char> buffer(kPerCycle * kSize);
  std::pmr::monotonic_buffer_resource mono(buffer.data(), buffer.size(),
                                           std::pmr::null_memory_resource());
  int n = 0;
  for (auto _ : state) {
    void* p = mono.allocate(kSize, 16);
    benchmark::DoNotOptimize(p);
    if (++n == kPerCycle) {
      mono.release();
      n = 0;
    }
  }
}
BENCHMARK(BM_MonotonicBuffer);

// The arrays of one step of samples/workspaces at batch 8.
constexpr std::size_t kStepArrays[] = {512, 1024, 128, 128, 1024, 512, 2048};

void step_malloc() {
  void* arrays[7];
  int i = 0;
  for (std::size_t bytes : kStepArrays) {
    arrays[i] = std::malloc(bytes);
    std::memset(arrays[i++], 0, bytes);
  }
  benchmark::DoNotOptimize(arrays);
  for (void* p : arrays) std::free(p);
}

void step_workspace(WorkspaceManager& manager, const WorkspaceConfiguration& config) {
  auto cycle = manager.get_and_activate(config, "LOOP");
  for (std::size_t bytes : kStepArrays) {
    char* p = manager.allocate(bytes).as<char>();
    std::memset(p, 0, bytes);
    benchmark::DoNotOptimize(p);
  }
}

// Arg 0: malloc, 1: workspace (learned in the first step, ND4J's defaults).
void BM_TrainingStep(benchmark::State& state) {
  SystemHeapResource heap;
  WorkspaceManager manager(&heap);
  const WorkspaceConfiguration config;
  const bool workspace = state.range(0) != 0;
  for (auto _ : state) {
    if (workspace)
      step_workspace(manager, config);
    else
      step_malloc();
  }
  state.SetLabel(workspace ? "workspace" : "malloc");
}
BENCHMARK(BM_TrainingStep)->Arg(0)->Arg(1);

// The workspace step with tracing on: 7 reuse + 7 free events, the scope
// begin/end and a workspace_reset per step. Arg: stacks (10 frames) or not.
void BM_TrainingStepTraced(benchmark::State& state) {
  SystemHeapResource heap;
  WorkspaceManager manager(&heap);
  const WorkspaceConfiguration config;
  step_workspace(manager, config);  // learned before tracing starts
  memtrail::bench::TracedSession session("workspace", state.range(0) != 0);
  for (auto _ : state) step_workspace(manager, config);
  state.SetLabel(state.range(0) ? "workspace, traced, stacks (10 frames)"
                                : "workspace, traced, no stacks");
}
BENCHMARK(BM_TrainingStepTraced)->Arg(0)->Arg(1);

}  // namespace

BENCHMARK_MAIN();
