# A small PyTorch training loop, each step marked with memtrail.iteration.
#
#   python3 train.py leak    keeps every step's features and graph (the bug)
#   python3 train.py fixed   keeps nothing from one step to the next
#
# The leak is the classic one: `features.append(hidden)` keeps a tensor that
# is part of the autograd graph, and `total_loss += loss` chains every
# step's loss into one ever-growing graph. Under memtrail:
#
#   memtrail run -o run -- python3 train.py leak
#   memtrail check --iteration-mark step --max-scope-growth 0 run
#
# fails, naming the line that makes the kept features (`hidden = ...`, kept
# by KEEP_FEATURES) and the one that accumulates the loss (ACCUMULATE_LOSS);
# `fixed` passes.
import sys

import memtrail
import torch

leak = len(sys.argv) > 1 and sys.argv[1] == "leak"
torch.manual_seed(0)
torch.set_num_threads(1)
model = torch.nn.Sequential(torch.nn.Linear(128, 64), torch.nn.ReLU(), torch.nn.Linear(64, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
inputs = torch.randn(64, 128)
targets = torch.randn(64, 1)

features = []
total_loss = 0.0


def train_step():
    global total_loss
    optimizer.zero_grad()
    hidden = model[1](model[0](inputs))
    loss = torch.nn.functional.mse_loss(model[2](hidden), targets)
    loss.backward()
    optimizer.step()
    if leak:
        features.append(hidden)  # KEEP_FEATURES: keeps the tensor and its graph
        total_loss += loss  # ACCUMULATE_LOSS: chains every step's graph
    else:
        total_loss += loss.item()


# Three steps unmarked first: PyTorch and CPython set up caches in the first
# steps (autograd's and the profiler's thread-locals, specialized code),
# once; marked, those one-off blocks would read as growth.
for step in range(3):
    train_step()
for step in range(40):
    with memtrail.iteration("step"):
        train_step()
print(f"{'leak' if leak else 'fixed'}: mean loss {float(total_loss) / 43:.4f}")
