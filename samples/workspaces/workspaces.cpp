// Workspaces: a two-layer MLP (16 -> 32 -> 4, ReLU, squared error) trained
// on CPU for STEPS steps. Every array of a step (input, activations,
// gradients) comes from the workspace "LOOP" (default configuration:
// FIRST_LOOP learning, OVERALLOCATE 0.3, EXTERNAL spills), so after the first
// step the loop body makes no system allocation. Step 5 takes a double batch:
// its arrays outgrow the learned buffer and the last one spills.
//
//   workspaces [--no-workspace] [STEPS]    (default 8)
//
// The workspace's configuration comes from MEMTRAIL_WORKSPACE_CONF (ND4J's
// defaults when unset), so the same loop runs from an MMAP workspace larger
// than a MEMTRAIL_MAX_BYTES RAM limit:
//   MEMTRAIL_MAX_BYTES=1M
//   MEMTRAIL_WORKSPACE_CONF=initialSize:4M,policyLocation:MMAP,policyLearning:NONE
//   workspaces
// (with policyLocation:RAM the 4 MiB buffer is refused: the limit's message,
// exit 1).
//
// --no-workspace takes the same arrays from malloc and marks each step's
// start (and the loop's end) with the mark "step": the trace a
// `memtrail replay --allocator workspace --iteration-mark step` reads.
//
// Per step with batch B: x B*16, h B*32, y B*4, dy B*4, dh B*32 floats,
// dW2 32*4 and dW1 16*32 floats: 5376 bytes at B = 8, 8192 at B = 16. The
// learned size is 5376 + 30% = 6988 bytes, so the double step's dW1 (2048
// bytes) spills.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "memtrail/alloc/workspace_manager.hpp"
#include "memtrail/recorder.hpp"

namespace {

using memtrail::alloc::WorkspaceConfiguration;
using memtrail::alloc::WorkspaceManager;

constexpr int kIn = 16, kHidden = 32, kOut = 4, kBatch = 8, kDoubleStep = 5;

// Arrays of one step: from the current workspace, or malloc'ed and freed at
// the end of the step.
class Arrays {
 public:
  explicit Arrays(WorkspaceManager* manager) : manager_(manager) {}
  Arrays(const Arrays&) = delete;
  Arrays& operator=(const Arrays&) = delete;
  ~Arrays() {
    for (int i = 0; i < count_; ++i) std::free(owned_[i]);
  }
  float* make(std::size_t n) {
    float* p = manager_ ? manager_->allocate(n * sizeof(float)).as<float>()
                        : static_cast<float*>(owned_[count_++] = std::malloc(n * sizeof(float)));
    std::memset(p, 0, n * sizeof(float));
    return p;
  }

 private:
  WorkspaceManager* manager_;
  void* owned_[8] = {};  // a fixed array: the malloc run makes no other allocation
  int count_ = 0;
};

// out[r][c] = sum_k a[r][k] * b[k][c] (a: rows x inner, b: inner x cols).
void matmul(const float* a, const float* b, float* out, int rows, int inner, int cols) {
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      float s = 0;
      for (int k = 0; k < inner; ++k) s += a[r * inner + k] * b[k * cols + c];
      out[r * cols + c] = s;
    }
}

// grad[i][j] = sum_r a[r][i] * d[r][j] (a^T d).
void outer(const float* a, const float* d, float* grad, int rows, int ni, int nj) {
  for (int i = 0; i < ni; ++i)
    for (int j = 0; j < nj; ++j) {
      float s = 0;
      for (int r = 0; r < rows; ++r) s += a[r * ni + i] * d[r * nj + j];
      grad[i * nj + j] = s;
    }
}

// One forward and backward pass with SGD; returns the loss.
float train_step(Arrays& arrays, std::vector<float>& w1, std::vector<float>& w2, int batch,
                 int step) {
  float* x = arrays.make(batch * kIn);
  for (int i = 0; i < batch * kIn; ++i) x[i] = std::sin(0.1f * (i + step));
  float* h = arrays.make(batch * kHidden);
  matmul(x, w1.data(), h, batch, kIn, kHidden);
  for (int i = 0; i < batch * kHidden; ++i) h[i] = h[i] > 0 ? h[i] : 0;
  float* y = arrays.make(batch * kOut);
  matmul(h, w2.data(), y, batch, kHidden, kOut);
  float* dy = arrays.make(batch * kOut);
  float loss = 0;
  for (int i = 0; i < batch * kOut; ++i) {
    dy[i] = y[i] - 1.0f;  // target 1
    loss += dy[i] * dy[i];
  }
  float* dh = arrays.make(batch * kHidden);
  for (int r = 0; r < batch; ++r)
    for (int k = 0; k < kHidden; ++k) {
      float s = 0;
      for (int c = 0; c < kOut; ++c) s += dy[r * kOut + c] * w2[k * kOut + c];
      dh[r * kHidden + k] = h[r * kHidden + k] > 0 ? s : 0;
    }
  float* dw2 = arrays.make(kHidden * kOut);
  outer(h, dy, dw2, batch, kHidden, kOut);
  float* dw1 = arrays.make(kIn * kHidden);
  outer(x, dh, dw1, batch, kIn, kHidden);
  const float lr = 0.01f / static_cast<float>(batch);
  for (int i = 0; i < kHidden * kOut; ++i) w2[i] -= lr * dw2[i];
  for (int i = 0; i < kIn * kHidden; ++i) w1[i] -= lr * dw1[i];
  return loss / static_cast<float>(batch);
}

// The training loop: STEPS steps, the arrays of each from one cycle of the
// workspace "LOOP" (or from malloc, marking each step).
float train(bool use_workspace, int steps, std::vector<float>& w1, std::vector<float>& w2) {
  WorkspaceManager& manager = WorkspaceManager::for_current_thread();
  const WorkspaceConfiguration config = WorkspaceConfiguration::from_environment();
  const std::string id = "LOOP";
  float loss = 0;
  for (int step = 1; step <= steps; ++step) {
    const int batch = step == kDoubleStep ? 2 * kBatch : kBatch;
    if (use_workspace) {
      auto ws = manager.get_and_activate(config, id);  // one cycle of "LOOP"
      Arrays arrays(&manager);
      loss = train_step(arrays, w1, w2, batch, step);
    } else {
      memtrail::record_mark("step");
      Arrays arrays(nullptr);
      loss = train_step(arrays, w1, w2, batch, step);
    }
  }
  if (!use_workspace) memtrail::record_mark("step");  // the last step ends here
  return loss;
}

}  // namespace

int main(int argc, char** argv) {
  bool use_workspace = true;
  int steps = 8;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--no-workspace") == 0) {
      use_workspace = false;
    } else {
      char* end = nullptr;
      long n = std::strtol(argv[i], &end, 10);
      if (*end != 0 || n <= 0 || n > 1000000) {
        std::fprintf(stderr, "workspaces: STEPS must be a number from 1 to 1000000, got '%s'\n",
                     argv[i]);
        return 2;
      }
      steps = static_cast<int>(n);
    }
  }
  std::vector<float> w1(kIn * kHidden), w2(kHidden * kOut);
  for (std::size_t i = 0; i < w1.size(); ++i) w1[i] = 0.05f * std::cos(static_cast<float>(i));
  for (std::size_t i = 0; i < w2.size(); ++i) w2[i] = 0.05f * std::sin(static_cast<float>(i));

  float loss = 0;
  try {
    loss = train(use_workspace, steps, w1, w2);
  } catch (const std::exception& e) {  // a bad configuration, a limit
    std::fprintf(stderr, "workspaces: %s\n", e.what());
    return 1;
  }
  std::printf("workspaces: %d steps (%s), final loss %.4f\n", steps,
              use_workspace ? "workspace LOOP" : "malloc", loss);
  return 0;
}
