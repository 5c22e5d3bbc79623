#!/usr/bin/python3
"""Where a traced program's extra memory goes (issue 28: "tracer memory
<= 30 MB over untraced"). Runs PROGRAM untraced and under `memtrail run`,
RUNS times interleaved, samples /proc/PID/smaps of the largest process of
the tree every 20 ms, and keeps each run's sample with the largest total
Rss (what GNU time's %M reports). Prints, per kind of mapping, the median
Rss at that peak untraced and traced, and the difference.

  bench/tracer_memory.py BUILD [--runs 3] [--env NAME=VALUE ...] -- PROGRAM ARGS...

Kinds: the brk heap; glibc's thread arenas (rw mappings on a 64 MiB
boundary); thread stacks (8 MiB rw mappings behind a guard page); other
anonymous mappings by size (>= 2 MiB, 128 KiB-2 MiB, < 128 KiB), where the
tracer's own tables, event blocks and heap live; the tracer's libraries
(libmemtrail*, libzstd, libunwind, liblzma); the program and its other
files. A kind's difference is the tracer's cost only where the program
allocates the same untraced (the --env variants, e.g. MEMTRAIL_STACKS=0,
attribute it further).
"""
import argparse
import os
import statistics
import subprocess
import tempfile
import time

ARENA = 64 << 20
STACK = 8 << 20
TRACER_LIBS = ("libmemtrail", "libzstd", "libunwind", "liblzma")


def descendants(pid):
    """pid and every process below it (by /proc/*/stat's ppid)."""
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    parents[int(entry)] = int(f.read().rsplit(")", 1)[1].split()[1])
            except OSError:
                pass
    tree, grew = {pid}, True
    while grew:
        grew = False
        for child, parent in parents.items():
            if parent in tree and child not in tree:
                tree.add(child)
                grew = True
    return tree


def read_smaps(pid):
    """[(start, end, perms, path, rss KiB)] of one process, or [] once gone."""
    maps, head = [], None
    try:
        with open(f"/proc/{pid}/smaps") as f:
            for line in f:
                first = line.split(None, 1)[0]
                if "-" in first and not first.endswith(":"):
                    fields = line.split(None, 5)
                    lo, hi = (int(x, 16) for x in fields[0].split("-"))
                    head = [lo, hi, fields[1], fields[5].strip() if len(fields) > 5 else ""]
                elif first == "Rss:" and head is not None:
                    maps.append((*head, int(line.split()[1])))
    except OSError:
        return []
    return maps


def kind(i, maps, program):
    lo, hi, perms, path, _ = maps[i]
    if path == "[heap]":
        return "brk heap"
    if path.startswith("/"):
        name = os.path.basename(path)
        if name.startswith(TRACER_LIBS):
            return "tracer libraries (memtrail, zstd, unwind, lzma)"
        return "the program's file" if path == program else "other files (libraries, data)"
    if path.startswith("["):
        return "stack and kernel ([stack], [vdso], ...)"
    size = hi - lo
    guarded = i > 0 and maps[i - 1][1] == lo and maps[i - 1][2].startswith("---")
    if lo % ARENA == 0 and perms.startswith("rw"):
        return "glibc thread arenas (64 MiB-aligned)"
    if guarded and STACK <= size <= STACK + 4096:
        return "thread stacks (8 MiB behind a guard page)"
    if size >= 2 << 20:
        return "anonymous >= 2 MiB"
    if size >= 128 << 10:
        return "anonymous 128 KiB - 2 MiB"
    return "anonymous < 128 KiB"


def peak(argv, env, program):
    """The tree's largest process's smaps at its largest total Rss: {kind: KiB}."""
    child = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    best, best_total = {}, -1
    while child.poll() is None:
        for pid in descendants(child.pid):
            maps = read_smaps(pid)
            total = sum(m[4] for m in maps)
            if total > best_total:
                best_total, best = total, {}
                for i in range(len(maps)):
                    k = kind(i, maps, program)
                    best[k] = best.get(k, 0) + maps[i][4]
        time.sleep(0.02)
    if child.returncode != 0:
        raise SystemExit(f"failed ({child.returncode}): {' '.join(argv)}")
    best["total"] = best_total
    return best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--env", action="append", default=[], help="NAME=VALUE for the traced run")
    ap.add_argument("argv", nargs="+")
    a = ap.parse_args()
    memtrail = os.path.join(os.path.abspath(a.build), "bin", "memtrail")
    program = os.path.realpath(a.argv[0])
    traced_env = dict(os.environ, **dict(e.split("=", 1) for e in a.env))
    samples = {"untraced": [], "traced": []}
    with tempfile.TemporaryDirectory(prefix="tracer-memory-") as work:
        for _ in range(a.runs):
            samples["untraced"].append(peak(a.argv, None, program))
            out = os.path.join(work, "run") + "/"
            samples["traced"].append(peak([memtrail, "run", "-q", "-o", out, "--"] + a.argv,
                                          traced_env, program))
    kinds = sorted({k for s in samples.values() for run in s for k in run if k != "total"})
    print(f"`{' '.join(a.argv)}`, {a.runs} interleaved runs, medians "
          f"(load average {os.getloadavg()[0]:.1f}); env: {' '.join(a.env) or 'none'}")
    print("| mappings | untraced MiB | traced MiB | traced − untraced |")
    print("|---|---|---|---|")
    for k in kinds + ["total"]:
        u = statistics.median(run.get(k, 0) for run in samples["untraced"]) / 1024
        t = statistics.median(run.get(k, 0) for run in samples["traced"]) / 1024
        print(f"| {k} | {u:.1f} | {t:.1f} | {t - u:+.1f} |")


if __name__ == "__main__":
    main()
