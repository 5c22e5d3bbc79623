// tidy-loop MODE [ITERATIONS]: an inference loop over memtrail::tensor.
//   steady    each step's output is disposed: "step" escapes 256 B per entry
//             and does not grow
//   forgot    the same loop without `y.dispose()`: "step" grows 256 bytes
//             per iteration, at the softmax line
//   donate    x = relu(x, donate(x)) on a 256 KiB tensor: one buffer live
//   nodonate  x = relu(x) then the old x disposed: two buffers live at the
//             peak, twice the tensor pool's peak of `donate`
// Run it under `memtrail run`; README.md has the commands and the numbers.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "memtrail/tensor/ops.hpp"
#include "memtrail/tensor/tidy.hpp"

using namespace memtrail::tensor;

namespace {

float inference(int iterations, bool forget) {
  Tensor w = Tensor::from(std::vector<float>(16 * 16, 0.01f), {16, 16});
  Tensor x = Tensor::from(std::vector<float>(4 * 16, 1.0f), {4, 16});
  float total = 0;
  for (int i = 0; i < iterations; ++i) {
    Tensor y = tidy("step", [&] {
      Tensor h = relu(matmul(x, w));
      return softmax(h);  // [4,16] float32: the 256 B that escape each step
    });
    total += tidy("score", [&] { return sum(y).values()[0]; });
    if (!forget) y.dispose();
  }
  w.dispose();
  x.dispose();
  return total;
}

void relu_chain(int iterations, bool donating) {
  Tensor x = Tensor::from(std::vector<float>(256 * 256, -1.0f), {256, 256});  // 256 KiB
  for (int i = 0; i < iterations; ++i) {
    if (donating) {
      x = relu(x, donate(x));
    } else {
      Tensor next = relu(x);
      x.dispose();
      x = next;
    }
  }
  x.dispose();
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  const int iterations = argc > 2 ? std::atoi(argv[2]) : 20;
  if (iterations <= 0) {
    std::fprintf(stderr, "tidy-loop: ITERATIONS must be a positive number\n");
    return 2;
  }
  if (mode == "steady" || mode == "forgot") {
    std::printf("score %.3f\n", inference(iterations, mode == "forgot"));
  } else if (mode == "donate" || mode == "nodonate") {
    relu_chain(iterations, mode == "donate");
  } else {
    std::fprintf(stderr, "usage: tidy-loop steady|forgot|donate|nodonate [ITERATIONS]\n");
    return 2;
  }
  return 0;
}
