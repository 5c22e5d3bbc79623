# A PyTorch inference loop that keeps one thing on purpose: each step's
# predictions (a 64x1 float32 tensor, 256 bytes of data) in a list, as an
# evaluation loop collects them. Under memtrail the loop's growth per
# iteration is what it keeps, and nothing else:
#
#   memtrail run -o run -- python3 infer.py
#   memtrail report --iteration-mark step run
import memtrail
import torch

torch.manual_seed(0)
torch.set_num_threads(1)
model = torch.nn.Sequential(torch.nn.Linear(128, 64), torch.nn.ReLU(), torch.nn.Linear(64, 1))
model.eval()
inputs = torch.randn(64, 128)

predictions = [None] * 40  # the list itself does not grow
with torch.no_grad():
    model(inputs)  # one step unmarked: PyTorch's one-off caches
    for step in range(40):
        with memtrail.iteration("step"):
            predictions[step] = model(inputs)  # KEEP_PREDICTIONS
print("kept", sum(p.numel() for p in predictions), "predictions")
