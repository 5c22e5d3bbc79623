#!/usr/bin/env python3
"""scripts/gpu-check's comparison of cuda_sample's trace with its own figures.

  gpu_check_sample.py REPORT_JSON FIGURES LEAK_LINE
FIGURES: the sample's "figures" line ("leak_blocks=3 leak_bytes=... ...").
Prints one line per comparison ("ok ..." or "MISMATCH ..."); the exit code
is the number of mismatches (2 for unusable input).
"""
import json
import sys


def main():
    if len(sys.argv) != 4:
        print("usage: gpu_check_sample.py REPORT_JSON FIGURES LEAK_LINE")
        return 2
    try:
        report = json.load(open(sys.argv[1]))
        fig = {k: int(v) for k, v in (kv.split("=") for kv in sys.argv[2].split())}
        leak_line = int(sys.argv[3])
    except (OSError, ValueError) as e:
        print(f"gpu_check_sample: unusable input: {e}")
        return 2
    pools = {p["name"]: p for p in report.get("pools", [])}
    bad = 0

    def same(what, got, want):
        nonlocal bad
        print(f"{'ok' if got == want else 'MISMATCH'} {what}: trace {got}, expected {want}")
        bad += got != want

    dev = pools.get("cuda:0 device")
    if dev is None:
        print("MISMATCH no 'cuda:0 device' pool in the trace (pools: %s)" % sorted(pools))
        return 1
    sites = [s for s in report["leaks"]["sites"] if s["pool"] == "cuda:0 device"]
    same("device leaks, blocks", sum(s["blocks"] for s in sites), fig["leak_blocks"])
    same("device leaks, bytes", sum(s["bytes"] for s in sites), fig["leak_bytes"])
    for s in sites:
        frame = next((f for f in s["stack"] if str(f.get("file", "")).endswith("kernels.cu")), None)
        where = f"{frame['file']}:{frame['line']} {frame['function']}" if frame else "no kernels.cu frame"
        same("leak stack (kernels.cu line)", frame["line"] if frame else None, leak_line)
        if frame and "leak_device_buffers" not in frame["function"]:
            print(f"MISMATCH leak stack function: {where}")
            bad += 1
    # Every cudaMalloc the tracer saw: the leak, the caching pool's
    # segments (its own num_device_alloc) and the stream-ordered blocks.
    same("cuda:0 device allocations",
         dev["allocations"], fig["leak_blocks"] + fig["num_device_alloc"] + fig["async_allocs"])
    same("cuda:0 device peak used bytes (pool peak + leak)",
         dev["peak_used_bytes"], fig["reserved_peak"] + fig["leak_bytes"])
    pool = pools.get("cuda sample pool")
    if pool is None:
        print("MISMATCH no 'cuda sample pool' in the trace")
        return bad + 1
    same("caching pool peak reserved = memory_stats reserved_bytes.all.peak",
         pool["peak_reserved_bytes"], fig["reserved_peak"])
    same("caching pool allocations = memory_stats allocation.all.allocated",
         pool["allocations"], fig["pool_allocations"])
    same("caching pool segment reserves = memory_stats num_device_alloc",
         pool["segment_reserves"], fig["num_device_alloc"])
    # Its upstream, CudaDeviceResource, recorded the same cudaMallocs.
    upstream = pools.get("cuda device 0")
    same("upstream 'cuda device 0' allocations = num_device_alloc",
         upstream["allocations"] if upstream else None, fig["num_device_alloc"])
    # The stream-ordered pool's reserve as the tracer sampled it (at every
    # stream-ordered call) peaks at what the sample read with its 8 MiB live,
    # and is all given back with the context.
    so = pools.get("cuda:0 stream-ordered")
    if so is None:
        print("MISMATCH no 'cuda:0 stream-ordered' pool in the trace")
        return bad + 1
    same("stream-ordered pool peak reserved = RESERVED_MEM_CURRENT with 8 MiB live",
         so["peak_reserved_bytes"], fig["async_reserved"])
    same("stream-ordered pool reserve after the context", so["final_reserved_bytes"], 0)
    return bad


if __name__ == "__main__":
    sys.exit(main())
