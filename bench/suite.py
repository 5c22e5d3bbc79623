"""Tracer benchmark suite (issue 28): each workload runs untraced, under
`memtrail run` and under heaptrack, RUNS times interleaved so machine noise
hits every mode alike; medians. Prints one Markdown table, worst memtrail
added cpu per event last.

Columns: events (from the memtrail trace); untraced cpu per event; added cpu
per event ((traced - untraced) / events, cpu = user + sys of the whole
process tree, writer thread and heaptrack_interpret included); wall ratio to
untraced; tracer memory (max RSS of the largest process of the tree minus
untraced's, MB); trace bytes per event; report time: `memtrail report
--no-symbol-cache` (symbols resolved from the ELF/DWARF files, as on a first
run) against `heaptrack_print`.

  bench/suite.sh BUILD_DIR [--runs N] [--only NAME,...] [--baseline DIR]

--baseline DIR: also runs DIR/bin/memtrail (its own preload library from
DIR/lib) in the same interleaving, as `memtrail@base`: before/after figures
from one run.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

# name -> (program in BUILD/bin, arguments, description)
WORKLOADS = {
    "distinct-stacks-2.6e5": ("distinct_stacks", ["262144", "27", "1000000"],
                              "~260 k distinct call stacks of depth 27, 1 thread"),
    "distinct-stacks-1e6": ("distinct_stacks", ["1048576", "27", "2000000"],
                            "10^6 distinct stacks (2^20 paths), depth 27, 1 thread"),
}


def timed(argv, out_file, env=None, check=True):
    """Runs argv under GNU time; returns (wall s, cpu s, max RSS KiB), or
    None when it failed and check is False."""
    tf = out_file + ".time"
    r = subprocess.run(["/usr/bin/time", "-f", "%e %U %S %M", "-o", tf] + argv,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    if r.returncode != 0:
        if check:
            raise RuntimeError(f"{argv} failed ({r.returncode})")
        return None
    wall, user, sys_, rss = open(tf).read().split()[-4:]
    return float(wall), float(user) + float(sys_), int(rss)


# heaptrack 1.4's interpreter grows without bound on some many-stack traces
# (docs/BENCHMARKS.md): it runs with 4 GiB of address space and 300 s at most,
# and its row says "fails" when that was not enough.
HEAPTRACK_LIMIT = ["prlimit", "--as=4294967296", "timeout", "300"]


def dir_bytes(path):
    if os.path.isfile(path):
        return os.path.getsize(path)
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs
               if f.endswith(".mtr"))


def first_trace(run_dir):
    for d, _, fs in os.walk(run_dir):
        for f in sorted(fs):
            if f.endswith(".mtr"):
                return os.path.join(d, f)
    raise RuntimeError(f"no trace in {run_dir}")


def measure(build, name, runs, baseline, heaptrack, work):
    prog, args, _ = WORKLOADS[name]
    argv = [os.path.join(build, "bin", prog)] + args
    tools = {"memtrail": os.path.join(build, "bin", "memtrail")}
    if baseline:
        tools["memtrail@base"] = os.path.join(baseline, "bin", "memtrail")
    samples = {m: [] for m in ["untraced"] + list(tools) + (["heaptrack"] if heaptrack else [])}
    out = {}
    for r in range(runs):
        for mode in samples:
            base = os.path.join(work, f"{name}.{mode}.{r}")
            if mode == "untraced":
                res = timed(argv, base)
            elif mode == "heaptrack":
                res = timed(HEAPTRACK_LIMIT + ["heaptrack", "-o", base] + argv, base, check=False)
                out[mode] = base + ".zst"
                if res is None:
                    if os.path.exists(out[mode]):
                        os.remove(out[mode])
                    out.pop(mode)
            else:
                env = None
                if mode != "memtrail":  # the baseline build's own libmemtrail.so, not its RUNPATH's
                    env = dict(os.environ, LD_LIBRARY_PATH=os.path.join(baseline, "lib"))
                res = timed([tools[mode], "run", "-q", "-o", base + "/", "--"] + argv, base, env)
                out[mode] = base
            if res is None:
                samples[mode].append(None)
                continue
            samples[mode].append(res)
            if r + 1 < runs and mode != "untraced":  # keep the last run's trace only
                p = out[mode]
                shutil.rmtree(p) if os.path.isdir(p) else os.remove(p)
    med = {m: tuple(statistics.median(x[i] for x in v) for i in range(3)) for m, v in samples.items()
           if all(v)}
    trace = first_trace(out["memtrail"])
    rep = subprocess.run([tools["memtrail"], "report", "--json", "--top", "1", "--no-symbols", trace],
                         capture_output=True, check=True, text=True)
    events = json.loads(rep.stdout)["summary"]["events"]
    reports = {"memtrail": timed([tools["memtrail"], "report", "--no-symbol-cache", trace],
                                 os.path.join(work, "report"))}
    if "heaptrack" in out:
        reports["heaptrack"] = timed(["heaptrack_print", "-f", out["heaptrack"]],
                                     os.path.join(work, "print"))
    sizes = {m: dir_bytes(p) for m, p in out.items()}
    return events, med, sizes, reports, [m for m in samples if m != "untraced"]


def row(name, events, med, sizes, reports, modes):
    u_wall, u_cpu, u_rss = med["untraced"]
    cells = [name, f"{events / 1e6:.2f} M", f"{u_cpu / events * 1e9:.1f} ns"]

    def per_mode(fmt):
        return " / ".join(fmt(m) if m in med else "fails" for m in modes)
    cells.append(per_mode(lambda m: f"{(med[m][1] - u_cpu) / events * 1e9:,.0f}"))
    cells.append(per_mode(lambda m: f"{med[m][0] / u_wall:.2f}×"))
    cells.append(per_mode(lambda m: f"{(med[m][2] - u_rss) / 1024:.0f}"))
    cells.append(per_mode(lambda m: f"{sizes[m] / events:.2f}"))
    rep = f"{reports['memtrail'][0]:.2f} s"
    if "heaptrack" in reports:
        rep += f" / {reports['heaptrack'][0]:.2f} s ({reports['heaptrack'][0] / reports['memtrail'][0]:.1f}× faster)"
    else:
        rep += " / –"
    cells.append(rep)
    return (med["memtrail"][1] - u_cpu) / events, "| " + " | ".join(cells) + " |", modes


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--only", default="")
    ap.add_argument("--baseline", default="")
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    names = [n for n in WORKLOADS if not a.only or n in a.only.split(",")]
    heaptrack = shutil.which("heaptrack") is not None and shutil.which("heaptrack_print") is not None
    rows = []
    with tempfile.TemporaryDirectory(prefix="suite-") as work:
        for n in names:
            rows.append(row(n, *measure(build, n, a.runs, a.baseline and os.path.abspath(a.baseline),
                                        heaptrack, work)))
            print(f"done: {n} (load {os.getloadavg()[0]:.1f})", file=sys.stderr)
    modes = " / ".join(rows[0][2]) if rows else ""
    print(f"load average at the end: {os.getloadavg()[0]:.1f}; {a.runs} interleaved runs, medians")
    print(f"| workload | events | untraced cpu/event | added cpu ns/event ({modes}) | wall ÷ untraced "
          f"| tracer MB over untraced | trace bytes/event | report (cold) memtrail / heaptrack_print |")
    print("|---|---|---|---|---|---|---|---|")
    for _, text, _ in sorted(rows):
        print(text)


if __name__ == "__main__":
    main()
