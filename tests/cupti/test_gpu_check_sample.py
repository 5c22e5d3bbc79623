#!/usr/bin/env python3
"""scripts/gpu_check_sample.py, the comparison scripts/gpu-check makes on
the GPU, on hand-made reports: the one the sample must produce passes, and
each kind of difference (leak count, bytes, stack line, device allocations,
pool peak) is counted as one mismatch."""
import copy
import json
import os
import subprocess
import sys
import tempfile

CHECKER = os.path.join(os.path.dirname(__file__), "..", "..", "scripts", "gpu_check_sample.py")
FIGURES = ("leak_blocks=3 leak_bytes=786432 num_device_alloc=3 reserved_peak=35651584 "
           "pool_allocations=103 async_allocs=8 async_reserved=33554432")
GOOD = {
    "pools": [
        {"name": "cuda:0 device", "allocations": 14, "peak_used_bytes": 35651584 + 786432},
        {"name": "cuda sample pool", "peak_reserved_bytes": 35651584, "allocations": 103,
         "segment_reserves": 3},
        {"name": "cuda:0 stream-ordered", "peak_reserved_bytes": 33554432,
         "final_reserved_bytes": 0},
        {"name": "cuda device 0", "allocations": 3},
    ],
    "leaks": {"sites": [
        {"pool": "cuda:0 device", "blocks": 3, "bytes": 786432, "stack": [
            {"file": "../samples/cuda/kernels.cu", "line": 27,
             "function": "cuda_sample::leak_device_buffers()"},
            {"file": "../samples/cuda/cuda_sample.cpp", "line": 120, "function": "main"}]},
        {"pool": "malloc", "blocks": 1, "bytes": 5, "stack": []}]},
}


def run(report, line=27):
    with tempfile.TemporaryDirectory(prefix="memtrail-gpucheck-") as d:
        path = os.path.join(d, "report.json")
        with open(path, "w") as f:
            json.dump(report, f)
        r = subprocess.run([sys.executable, CHECKER, path, FIGURES, str(line)],
                           capture_output=True, text=True)
        return r.returncode, r.stdout


def changed(edit):
    r = copy.deepcopy(GOOD)
    edit(r)
    return r


def main():
    failures = 0

    def want(what, got, expected):
        nonlocal failures
        if got != expected:
            print(f"FAIL {what}: {got} != {expected}")
            failures += 1

    want("the sample's own report", run(GOOD)[0], 0)
    want("wrong leak line", run(GOOD, line=28)[0], 1)
    want("one block fewer", run(changed(lambda r: r["leaks"]["sites"][0].update(blocks=2)))[0], 1)
    want("bytes off by one", run(changed(lambda r: r["leaks"]["sites"][0].update(bytes=786431)))[0], 1)
    want("an extra cudaMalloc", run(changed(lambda r: r["pools"][0].update(allocations=15)))[0], 1)
    want("pool peak differs", run(changed(lambda r: r["pools"][1].update(peak_reserved_bytes=1)))[0], 1)
    want("no device pool", run(changed(lambda r: r["pools"].pop(0)))[0], 1)
    want("reserve peak differs",
         run(changed(lambda r: r["pools"][2].update(peak_reserved_bytes=2 << 20)))[0], 1)
    want("upstream saw another cudaMalloc",
         run(changed(lambda r: r["pools"][3].update(allocations=4)))[0], 1)
    want("reserve not given back",
         run(changed(lambda r: r["pools"][2].update(final_reserved_bytes=1)))[0], 1)
    print("gpu_check_sample:", "FAILED" if failures else "ok")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
