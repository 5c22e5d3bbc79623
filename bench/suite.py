"""Tracer benchmark suite (issue 28): each workload of bench/workloads.py
runs untraced, under `memtrail run` and under heaptrack, RUNS times
interleaved so machine noise hits every mode alike; medians. Prints one
Markdown table, worst memtrail added cpu per event last. The columns are
explained in docs/BENCHMARKS.md ("How to run the suite").

  bench/suite.sh BUILD_DIR [--quick] [--runs N] [--only NAME,...] [--baseline DIR] [--strict]
                 [--keep DIR]

--quick: every row once at small scale (a check that the suite works, not a
measurement). --baseline DIR: also runs DIR/bin/memtrail (its own preload
library from DIR/lib) in the same interleaving, as `memtrail@base`.
--strict: a skipped row fails the run too (the ctest's mode).
--keep DIR: the last run's traces of each row stay in DIR (ROW.memtrail/,
ROW.heaptrack.zst), for the measurements that read a trace afterwards
(bench/report_speed.py, trace_bytes); the suite's figures do not change.

Exit status 1 when a row failed: a workload or memtrail erred, or the traced
program printed something else than the untraced one. A row whose tool is
missing is skipped with its reason and is no failure.
"""
import argparse
import glob
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from workloads import WORKLOADS, Context, Skip

# heaptrack 1.4's interpreter grows without bound on some many-stack traces
# (docs/BENCHMARKS.md): it runs with 4 GiB of address space and 300 s at
# most; a row where that was not enough says "fails" and stops retrying it.
HEAPTRACK_LIMIT = ["prlimit", "--as=4294967296", "timeout", "300"]
RUN_LIMIT = ["timeout", "600"]


class RowError(Exception):
    """The row's measurement is wrong or missing; the message says why."""


def timed(argv, base, env=None):
    """Runs argv with stdout to base.out; returns (wall s, cpu s, max RSS
    KiB), or None when it exited non-zero. cpu is wait4's user + sys of the
    process and every descendant it waited for, to the microsecond (GNU
    time's is to 10 ms); max RSS is GNU time's `%M` (the largest process of
    the tree), since a child forked from this Python starts with its RSS."""
    with open(base + ".out", "wb") as out:
        started = time.monotonic()
        child = subprocess.Popen(["/usr/bin/time", "-f", "%M", "-o", base + ".rss"] + argv,
                                 stdout=out, stderr=subprocess.DEVNULL, env=env)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.monotonic() - started
    child.returncode = os.waitstatus_to_exitcode(status)  # reaped: Popen must not wait again
    if child.returncode != 0:
        return None
    return wall, usage.ru_utime + usage.ru_stime, int(open(base + ".rss").read().split()[-1])


def heaptrack_without_gui(work):
    """A copy of the heaptrack script beside no heaptrack_gui. The script
    opens heaptrack_gui (found beside itself) once recording ends, when it
    is installed, and waits for it to close: under QT_QPA_PLATFORM=offscreen
    (ctest's) that is forever, and every heaptrack run hit the 300 s limit.
    The copy finds its interpreter and preload library through a `lib` link
    to the real one's, so what is measured is unchanged."""
    real = os.path.realpath(shutil.which("heaptrack"))
    root = os.path.join(work, "heaptrack")
    os.makedirs(os.path.join(root, "bin"))
    os.symlink(os.path.join(os.path.dirname(os.path.dirname(real)), "lib"), os.path.join(root, "lib"))
    shutil.copy2(real, os.path.join(root, "bin", "heaptrack"))
    return os.path.join(root, "bin", "heaptrack")


def trace_files(path):
    return sorted(glob.glob(os.path.join(path, "**", "*.mtr"), recursive=True))


def heaptrack_file(base):
    found = glob.glob(base + ".gz") + glob.glob(base + ".zst")
    return found[0] if found else None


class Tracers:
    """The tracing modes of one suite run and how each traces a command."""

    def __init__(self, build, baseline, heaptrack):
        self.memtrail = {"memtrail": os.path.join(build, "bin", "memtrail")}
        if baseline:
            self.memtrail["memtrail@base"] = os.path.join(baseline, "bin", "memtrail")
        self.baseline = baseline
        self.modes = list(self.memtrail) + (["heaptrack"] if heaptrack else [])
        self.heaptrack = "heaptrack"  # main() points it at heaptrack_without_gui()

    def record(self, mode, argv, base):
        """Traces argv; returns (timing or None, trace path or None)."""
        if mode == "heaptrack":
            res = timed(HEAPTRACK_LIMIT + [self.heaptrack, "-o", base] + argv, base)
            return res, heaptrack_file(base)
        env = None
        if mode != "memtrail":  # the baseline build's own libmemtrail.so, not its RUNPATH's
            env = dict(os.environ, LD_LIBRARY_PATH=os.path.join(self.baseline, "lib"))
        res = timed(RUN_LIMIT + [self.memtrail[mode], "run", "-q", "-o", base + "/", "--"] + argv,
                    base, env)
        traces = trace_files(base)
        return res, traces[0] if traces else None

    def report(self, mode, trace, base):
        """Times the cold report of one trace: memtrail without its symbol
        cache (as on a first run), heaptrack_print."""
        if mode == "heaptrack":
            return timed(HEAPTRACK_LIMIT + ["heaptrack_print", "-f", trace], base)
        return timed(RUN_LIMIT + [self.memtrail[mode], "report", "--no-symbol-cache", trace], base)


def trace_bytes(path):
    """A heaptrack file's size, or all .mtr files of a memtrail run directory."""
    if os.path.isdir(path):
        return sum(os.path.getsize(t) for t in trace_files(path))
    return os.path.getsize(path)


def remove(path):
    shutil.rmtree(path) if os.path.isdir(path) else os.remove(path)


def same_output(base_a, base_b):
    return open(base_a + ".out", "rb").read() == open(base_b + ".out", "rb").read()


class Samples:
    """Per mode: the timings of the runs, the report timings, the last trace."""

    def __init__(self, modes):
        self.runs = {m: [] for m in ["untraced"] + modes}
        self.reports = {m: [] for m in modes}
        self.trace = {}  # the last run's, for the event count
        self.bytes = {}
        self.failed = set()

    def median(self, mode, i):
        return statistics.median(x[i] for x in self.runs[mode])


def run_once(tracers, argv, samples, base, last):
    """One interleaved round: untraced, then each tracer, each followed by
    its report."""
    res = timed(RUN_LIMIT + argv, base + ".untraced")
    if res is None:
        raise RowError(f"untraced run failed: {' '.join(argv)}")
    samples.runs["untraced"].append(res)
    for mode in tracers.modes:
        if mode in samples.failed:
            continue
        key = base + (".ht" if mode == "heaptrack" else ".mt" if mode == "memtrail" else ".base.mt")
        res, trace = tracers.record(mode, argv, key)
        if res is None or trace is None:
            if mode == "heaptrack":  # its known limits: the row says "fails"
                samples.failed.add(mode)
                continue
            raise RowError(f"{mode} run failed: {' '.join(argv)}")
        if mode != "heaptrack" and not same_output(key, base + ".untraced"):
            raise RowError(f"the program's output under {mode} differs from untraced")
        report = tracers.report(mode, trace, key + ".report")
        if report is None:
            raise RowError(f"{mode} report of {trace} failed")
        samples.runs[mode].append(res)
        samples.reports[mode].append(report)
        output = trace if mode == "heaptrack" else key
        samples.bytes[mode] = trace_bytes(output)
        if last:
            samples.trace[mode] = trace
        else:
            remove(output)


def count_events(memtrail, trace):
    rep = subprocess.run([memtrail, "report", "--json", "--top", "1", "--no-symbols", trace],
                         capture_output=True, check=True, text=True)
    return json.loads(rep.stdout)["summary"]["events"]


def keep_traces(samples, name, keep):
    """Moves the last run's traces of row `name` into `keep`: the memtrail
    run directory as NAME.memtrail/, heaptrack's file as NAME.heaptrack.EXT."""
    for mode, trace in samples.trace.items():
        if mode == "heaptrack":
            ext = trace.rsplit(".", 1)[-1]
            shutil.move(trace, os.path.join(keep, f"{name}.heaptrack.{ext}"))
        elif mode == "memtrail":
            target = os.path.join(keep, f"{name}.memtrail")
            if os.path.exists(target):
                shutil.rmtree(target)
            shutil.move(os.path.dirname(trace), target)


def measure(tracers, workload, ctx, runs, keep):
    argv = workload.argv(ctx)
    samples = Samples(tracers.modes)
    for r in range(runs):
        base = os.path.join(ctx.work, f"{workload.name}.{r}")
        run_once(tracers, argv, samples, base, r + 1 == runs)
    events = count_events(tracers.memtrail["memtrail"], samples.trace["memtrail"])
    if events == 0:
        raise RowError("the memtrail trace holds no events")
    if keep:
        keep_traces(samples, workload.name, keep)
    return events, samples, samples.bytes


def ratio(traced, untraced):
    """traced ÷ untraced; "–" where the untraced time rounds to zero."""
    return f"{traced / untraced:.2f}×" if untraced > 0 else "–"


def row_cells(name, events, samples, sizes, modes):
    """The table's cells of one measured row, and its sort key."""
    u_wall, u_cpu, u_rss = (samples.median("untraced", i) for i in range(3))
    ok = [m for m in modes if m not in samples.failed]

    def each(fmt):
        return " / ".join(fmt(m) if m in ok else "fails" for m in modes)

    added = {m: (samples.median(m, 1) - u_cpu) / events * 1e9 for m in ok}
    count = f"{events / 1e6:.2f} M" if events >= 100000 else f"{events / 1e3:.1f} k"
    cells = [name, count, f"{u_cpu / events * 1e9:,.1f} ns"]
    cells += [f"{added[m]:,.0f} ns" if m in ok else "fails" for m in modes]
    cells.append(each(lambda m: ratio(samples.median(m, 0), u_wall)))
    cells.append(each(lambda m: ratio(samples.median(m, 1), u_cpu)))
    cells.append(each(lambda m: f"{(samples.median(m, 2) - u_rss) / 1024:,.0f}"))
    cells.append(each(lambda m: f"{sizes[m] / events:.2f}"))
    cells.append(report_cell(samples, modes))
    return added.get("memtrail", float("inf")), cells


def report_cell(samples, modes):
    med = {m: statistics.median(x[0] for x in samples.reports[m]) for m in modes
           if samples.reports[m] and m not in samples.failed}
    text = " / ".join(f"{med[m]:.2f} s" if m in med else "fails" for m in modes)
    if "heaptrack" in med and "memtrail" in med and med["memtrail"] > 0:
        text += f" ({med['heaptrack'] / med['memtrail']:.1f}× heaptrack_print's speed)"
    return text


def header(modes):
    per_mode = " / ".join(modes)
    cols = ["workload", "events", "untraced cpu/event"]
    cols += [f"{m} added cpu/event" for m in modes]
    cols += [f"wall ÷ untraced ({per_mode})", f"cpu ÷ untraced ({per_mode})",
             f"tracer MB over untraced ({per_mode})", f"trace bytes/event ({per_mode})",
             f"report, cold ({per_mode}_print)"]
    return "| " + " | ".join(cols) + " |\n|" + "---|" * len(cols)


def note_row(name, text, width):
    return "| " + " | ".join([name, text] + [""] * (width - 2)) + " |"


def parse_args():
    ap = argparse.ArgumentParser(description="memtrail's tracer benchmark suite")
    ap.add_argument("build", help="the build directory (scripts/test's: build)")
    ap.add_argument("--runs", type=int, default=0, help="interleaved runs (default 3; 1 with --quick)")
    ap.add_argument("--quick", action="store_true", help="each row once at small scale")
    ap.add_argument("--only", default="", help="comma-separated row names")
    ap.add_argument("--baseline", default="", help="another build's install/build dir, as memtrail@base")
    ap.add_argument("--strict", action="store_true",
                    help="a skipped row fails too (the ctest: its rows must run)")
    ap.add_argument("--keep", default="", help="a directory that keeps each row's last traces")
    a = ap.parse_args()
    if a.keep:
        a.keep = os.path.abspath(a.keep)
        os.makedirs(a.keep, exist_ok=True)
    a.runs = a.runs or (1 if a.quick else 3)
    names = [w.name for w in WORKLOADS]
    unknown = [n for n in a.only.split(",") if n and n not in names]
    if unknown:
        ap.error(f"unknown rows {unknown}; rows: {', '.join(names)}")
    return a


def run_rows(a, tracers, work):
    """Measures every selected row; returns (measured, skipped, errors)."""
    ctx = Context(os.path.abspath(a.build), work, a.quick)
    measured, skipped, errors = [], [], []
    for w in WORKLOADS:
        if a.only and w.name not in a.only.split(","):
            continue
        started = time.monotonic()
        try:
            events, samples, sizes = measure(tracers, w, ctx, a.runs, a.keep)
            measured.append(row_cells(w.name, events, samples, sizes, tracers.modes))
            what = "done"
        except Skip as e:
            skipped.append((w.name, f"skipped: {e}"))
            what = f"skipped ({e})"
        except (RowError, subprocess.CalledProcessError, OSError) as e:
            errors.append((w.name, f"**error**: {e}"))
            what = f"ERROR ({e})"
        print(f"{what}: {w.name} in {time.monotonic() - started:.0f} s "
              f"(load {os.getloadavg()[0]:.1f})", file=sys.stderr, flush=True)
    return measured, skipped, errors


def main():
    a = parse_args()
    build = os.path.abspath(a.build)
    heaptrack = shutil.which("heaptrack") is not None and shutil.which("heaptrack_print") is not None
    tracers = Tracers(build, a.baseline and os.path.abspath(a.baseline), heaptrack)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="suite-") as work:
        if heaptrack:
            tracers.heaptrack = heaptrack_without_gui(work)
        measured, skipped, errors = run_rows(a, tracers, work)
    scale = "--quick: small scale, 1 run" if a.quick else f"{a.runs} interleaved runs, medians"
    print(f"bench/suite.sh: {scale}; {time.monotonic() - started:.0f} s; "
          f"load average at the end {os.getloadavg()[0]:.1f}"
          + ("" if heaptrack else "; heaptrack not installed: its columns are left out"))
    width = 3 + len(tracers.modes) + 5
    print(header(tracers.modes))
    for name, text in skipped:
        print(note_row(name, text, width))
    for _, cells in sorted(measured, key=lambda r: r[0]):
        print("| " + " | ".join(cells) + " |")
    for name, text in errors:
        print(note_row(name, text, width))
    return 1 if errors or (a.strict and skipped) else 0


if __name__ == "__main__":
    sys.exit(main())
