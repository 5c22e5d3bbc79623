"""torch_train: the PyTorch program of issue 28's report targets, a CPU
training loop of Debian's python3-torch (1.13): `import torch` (libtorch_cpu:
tens of thousands of exported symbols, no debug info), a 2-layer MLP and
STEPS SGD steps on one thread. Its trace is what `memtrail report` must read
faster than heaptrack_print reads heaptrack's (docs/BENCHMARKS.md, "Targets").
It does not import memtrail, so heaptrack and memtrail trace the same program.

  /usr/bin/python3 torch_train.py [STEPS=20]
"""
import sys

import torch


def main(steps):
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = torch.nn.Sequential(torch.nn.Linear(128, 64), torch.nn.ReLU(), torch.nn.Linear(64, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    inputs, targets = torch.randn(64, 128), torch.randn(64, 1)
    for _ in range(steps):
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(inputs), targets)
        loss.backward()
        optimizer.step()
    print(f"loss after {steps} steps: {loss.item():.4f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20)
