#!/usr/bin/python3
"""Report speed side by side: `memtrail report` of several builds and
`heaptrack_print` on traces of the same workload, interleaved run by run,
wall and cpu (user + sys of the process, from wait4) medians.

  bench/report_speed.py --runs 5 \\
      --memtrail main=/path/main/build/bin/memtrail --memtrail new=build/bin/memtrail \\
      --trace tight-pairs=tight.mtr,ht_tight.zst --trace fifo=fifo.mtr,ht_fifo.zst

Each memtrail build runs `report --no-symbol-cache TRACE` (symbols read from
the ELF/DWARF files, as on a first run) and `report --no-symbols TRACE` (the
event pass alone; not for a NAME=PATH:cold build); heaptrack_print runs
`-f FILE`. All output is discarded.
"""
import argparse
import os
import statistics
import subprocess
import time


def timed(argv):
    """(wall s, cpu s) of one run of argv, its output discarded."""
    start = time.monotonic()
    with open(os.devnull, "wb") as null:
        p = subprocess.Popen(argv, stdout=null, stderr=null)
        _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"failed ({status}): {' '.join(argv)}")
    return wall, ru.ru_utime + ru.ru_stime


def commands(tools, mtr, zst):
    """(label, argv) of every run of one round, in order."""
    out = []
    for name, binary in tools:
        binary, _, only_cold = binary.partition(":")
        out.append((f"{name} cold", [binary, "report", "--no-symbol-cache", mtr]))
        if not only_cold:
            out.append((f"{name} --no-symbols", [binary, "report", "--no-symbols", mtr]))
    if zst:
        out.append(("heaptrack_print", ["heaptrack_print", "-f", zst]))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--memtrail", action="append", required=True, help="NAME=PATH")
    ap.add_argument("--trace", action="append", required=True, help="NAME=MTR[,HEAPTRACK_ZST]")
    args = ap.parse_args()
    tools = [tuple(t.split("=", 1)) for t in args.memtrail]
    print(f"load average at start: {os.getloadavg()[0]:.1f}")
    print("| trace | run | wall s (median) | cpu s (median) |")
    print("|---|---|---|---|")
    for spec in args.trace:
        name, files = spec.split("=", 1)
        mtr, _, zst = files.partition(",")
        runs = commands(tools, mtr, zst)
        samples = {label: [] for label, _ in runs}
        for _ in range(args.runs):
            for label, argv in runs:
                samples[label].append(timed(argv))
        for label, _ in runs:
            wall = statistics.median(w for w, _ in samples[label])
            cpu = statistics.median(c for _, c in samples[label])
            print(f"| {name} | {label} | {wall:.3f} | {cpu:.3f} |", flush=True)
    print(f"load average at end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
