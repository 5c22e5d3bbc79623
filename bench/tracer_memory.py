#!/usr/bin/python3
"""Where a traced program's extra memory goes (issue 28: "tracer memory
<= 30 MB over untraced"). Runs PROGRAM untraced and under `memtrail run`,
RUNS times interleaved, samples /proc/PID/smaps of the largest process of
the tree every 20 ms, and keeps each run's sample with the largest total
Rss (what GNU time's %M reports). Prints, per kind of mapping, the median
Rss at that peak untraced and traced, and the difference.

  bench/tracer_memory.py BUILD [--runs 3] [--env NAME=VALUE ...] [--own] -- PROGRAM ARGS...

Kinds: the brk heap; glibc's thread arenas (rw mappings on a 64 MiB
boundary); thread stacks (8 MiB rw mappings behind a guard page); other
anonymous mappings by size (>= 2 MiB, 128 KiB-2 MiB, < 128 KiB), where the
tracer's own tables, event blocks and heap live; the tracer's libraries
(libmemtrail*, libzstd, libunwind, liblzma); the program and its other
files. A kind's difference is the tracer's cost only where the program
allocates the same untraced (the --env variants, e.g. MEMTRAIL_STACKS=0,
attribute it further). Options of `memtrail run` itself (--no-stacks) go in
--run-option: `memtrail run` sets MEMTRAIL_STACKS from its own options, so
--env MEMTRAIL_STACKS=0 changes nothing.

--own also sets MEMTRAIL_MEMORY_DEBUG=1 in the traced runs and prints the
tracer's own mappings by purpose as it reports them at exit (docs/tracing.md):
the median MiB resident at the process's peak RSS and when the tracer held
the most (often the exit scan). This
parts the anonymous rows exactly where the tracer's mappings and the
program's interleave.
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


def own_report(text):
    """MEMTRAIL_MEMORY_DEBUG's lines: {purpose: (MiB resident at the peak, most resident)}."""
    rows, table = {}, False
    for line in text.splitlines():
        if not line.startswith("memtrail: "):
            continue
        fields = line[len("memtrail: "):].rsplit(None, 6)
        try:
            if line.split()[1:2] == ["purpose"]:
                table = True
            elif table and len(fields) == 7:
                rows[fields[0]] = (float(fields[2]), float(fields[4]))
            elif table and fields[0] == "total":
                parts = line.split()
                rows["total"] = (float(parts[-3]), float("nan"))
        except ValueError:  # not a row of the table
            pass
    return rows


def peak(argv, env, program, own=None):
    """The tree's largest process's smaps at its largest total Rss: {kind: KiB}.
    With `own` (a list), the tracer's own report is appended to it."""
    child = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE if own is not None else subprocess.DEVNULL,
                             text=True)
    if own is not None:  # the report comes at exit: read stderr on a thread
        import threading
        err = []
        reader = threading.Thread(target=lambda: err.append(child.stderr.read()))
        reader.start()
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
    if own is not None:
        reader.join()
        own.append(own_report(err[0] if err else ""))
    if child.returncode != 0:
        raise SystemExit(f"failed ({child.returncode}): {' '.join(argv)}")
    best["total"] = best_total
    return best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--env", action="append", default=[], help="NAME=VALUE for the traced run")
    ap.add_argument("--run-option", action="append", default=[],
                    help="an option of `memtrail run` (e.g. --no-stacks)")
    ap.add_argument("--own", action="store_true",
                    help="MEMTRAIL_MEMORY_DEBUG=1: the tracer's own mappings by purpose")
    ap.add_argument("argv", nargs="+")
    a = ap.parse_args()
    memtrail = os.path.join(os.path.abspath(a.build), "bin", "memtrail")
    program = os.path.realpath(a.argv[0])
    traced_env = dict(os.environ, **dict(e.split("=", 1) for e in a.env))
    if a.own:
        traced_env["MEMTRAIL_MEMORY_DEBUG"] = "1"
    samples = {"untraced": [], "traced": []}
    own = [] if a.own else None
    with tempfile.TemporaryDirectory(prefix="tracer-memory-") as work:
        for _ in range(a.runs):
            samples["untraced"].append(peak(a.argv, None, program))
            out = os.path.join(work, "run") + "/"
            samples["traced"].append(peak([memtrail, "run", "-q", "-o", out] + a.run_option +
                                          ["--"] + a.argv, traced_env, program, own))
    kinds = sorted({k for s in samples.values() for run in s for k in run if k != "total"})
    print(f"`{' '.join(a.argv)}`, {a.runs} interleaved runs, medians "
          f"(load average {os.getloadavg()[0]:.1f}); env: {' '.join(a.env) or 'none'}; "
          f"run options: {' '.join(a.run_option) or 'none'}")
    print("| mappings | untraced MiB | traced MiB | traced − untraced |")
    print("|---|---|---|---|")
    for k in kinds + ["total"]:
        u = statistics.median(run.get(k, 0) for run in samples["untraced"]) / 1024
        t = statistics.median(run.get(k, 0) for run in samples["traced"]) / 1024
        print(f"| {k} | {u:.1f} | {t:.1f} | {t - u:+.1f} |")
    if own:
        print("\nThe tracer's own mappings (MEMTRAIL_MEMORY_DEBUG), MiB resident:")
        print("| purpose | at the process's peak RSS | when the tracer held the most |")
        print("|---|---|---|")
        for purpose in own[0]:
            at_peak = statistics.median(run.get(purpose, (0, 0))[0] for run in own)
            most = statistics.median(run.get(purpose, (0, 0))[1] for run in own)
            most = "—" if most != most else f"{most:.1f}"  # the total has no "most seen"
            print(f"| {purpose} | {at_peak:.1f} | {most} |")


if __name__ == "__main__":
    main()
