#!/usr/bin/env python3
"""Times heaptrack_gui and memtrail-gui on the same program's traces.

Run by bench/gui_vs_heaptrack.sh inside one Xvfb whose framebuffer is a
file (Xvfb -fbdir): polling the screen is then a read of that file, with
no X request that would compete with the GUI for the 2 cores.

  gui_vs_heaptrack.py FBFILE WORK RUNS MEMTRAIL_GUI|- CASE...
  CASE = NAME,EVENTS,HEAPTRACK_ZST,MEMTRAIL_MTR

heaptrack_gui prints nothing when it has loaded, so it is timed as the
anchor (shared/reference/heaptrack-gui) was: a screenshot every 0.25 s from
launch until the screen has not changed for QUIET s; then
  summary visible = first shot whose key-number band (SUMMARY_BAND rows) is
                    as in the final shot (the numbers are computed last in
                    the summary, so they are on screen only once it is);
  all tabs loaded = first shot equal to the final one (chart tabs enabled,
                    the status-bar progress gone).
memtrail-gui reports its own events with MEMTRAIL_GUI_TIMING=exit
(`memtrail-gui: timing EVENT MS cpu CPU_MS` on stderr) and exits once every view is
ready and the visible one has painted; the launch-to-exit wall time is
measured here too. Only the visible view paints, so each run launches it
twice: --view summary (the table's row) and --view timeline (its
timeline-painted). Peak memory is ru_maxrss of
the process (= VmHWM), from wait4.
"""
import hashlib
import os
import re
import signal
import statistics
import subprocess
import sys
import time

POLL_S = 0.25
QUIET_S = float(os.environ.get("QUIET_S", "3"))
TIMEOUT_S = float(os.environ.get("GUI_TIMEOUT_S", "150"))
SUMMARY_BAND = (60, 180)  # screen rows of heaptrack_gui's summary key numbers


def read_frame(fbfile):
    """(hash of the whole screen, hash of the summary band) of an XWD file."""
    with open(fbfile, "rb") as f:
        data = f.read()
    header = [int.from_bytes(data[i:i + 4], "big") for i in range(0, 100, 4)]
    header_size, bytes_per_line, ncolors = header[0], header[12], header[19]
    pixels = header_size + 12 * ncolors
    lo, hi = (pixels + row * bytes_per_line for row in SUMMARY_BAND)
    return (hashlib.blake2b(data[pixels:], digest_size=16).digest(),
            hashlib.blake2b(data[lo:hi], digest_size=16).digest())


def reap(proc, block):
    """wait4 on proc (not Popen's own wait, which drops the rusage): None
    while it runs, else (exit status, peak MiB = ru_maxrss, cpu s)."""
    pid, status, usage = os.wait4(proc.pid, 0 if block else os.WNOHANG)
    if pid == 0:
        return None
    proc.returncode = os.waitstatus_to_exitcode(status)  # Popen must not wait again
    return proc.returncode, usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime


def time_heaptrack_gui(fbfile, zst, log):
    blank, blank_band = read_frame(fbfile)
    start = time.monotonic()
    proc = subprocess.Popen(["heaptrack_gui", zst], stdout=log, stderr=log)
    shots = []  # (seconds since launch, whole, band)
    quiet = int(QUIET_S / POLL_S)
    while True:
        time.sleep(max(0.0, start + (len(shots) + 1) * POLL_S - time.monotonic()))
        whole, band = read_frame(fbfile)
        shots.append((time.monotonic() - start, whole, band))
        if reap(proc, block=False) is not None:
            raise RuntimeError(f"heaptrack_gui exited ({proc.returncode}) while loading {zst}")
        if shots[-1][0] > TIMEOUT_S:
            proc.kill()
            reap(proc, block=True)
            raise RuntimeError(f"heaptrack_gui: {zst} not loaded after {TIMEOUT_S:.0f} s")
        last = [s[1] for s in shots[-quiet - 1:]]
        if len(last) > quiet and whole != blank and len(set(last)) == 1:
            break
    proc.terminate()
    _, peak, cpu = reap(proc, block=True)
    final = shots[-1]
    if final[2] == blank_band:  # nothing drawn where the numbers should be
        raise RuntimeError(f"heaptrack_gui showed no summary numbers for {zst}")
    summary = next(t for t, _, b in shots if b == final[2])
    loaded = next(t for t, w, _ in shots if w == final[1])
    return {"summary": summary, "all tabs": loaded, "peak MiB": peak, "cpu s": cpu}


TIMING = re.compile(r"^memtrail-gui: timing (\S+) (\d+(?:\.\d+)?)(?: cpu (\d+(?:\.\d+)?))?\s*$")


def time_memtrail_gui(gui, mtr, view, errfile, log):
    env = dict(os.environ, MEMTRAIL_GUI_TIMING="exit")
    start = time.monotonic()
    with open(errfile, "w") as err:
        proc = subprocess.Popen([gui, mtr, "--view", view], stdout=log, stderr=err, env=env)
    while (done := reap(proc, block=False)) is None:
        if time.monotonic() - start > TIMEOUT_S:
            proc.kill()
            reap(proc, block=True)
            raise RuntimeError(f"memtrail-gui: {mtr} not ready after {TIMEOUT_S:.0f} s")
        time.sleep(0.01)
    wall = time.monotonic() - start
    status, peak, cpu = done
    text = open(errfile).read()
    log.write(text)
    if status != 0:
        raise RuntimeError(f"memtrail-gui exited {status} on {mtr}: {text.strip()[-200:]}")
    marks = [m for m in map(TIMING.match, text.splitlines()) if m]
    row = {m.group(1): float(m.group(2)) / 1000 for m in marks}
    # EVENT cpu: the process's CPU seconds at the mark (the wall clock is
    # the load's on a shared machine).
    row.update({m.group(1) + " cpu": float(m.group(3)) / 1000 for m in marks if m.group(3)})
    if "all-ready" not in row:
        raise RuntimeError(f"memtrail-gui printed no 'timing all-ready' line for {mtr}")
    row.update({"exit": wall, "peak MiB": peak, "cpu s": cpu})
    return row


def cell(values, key, scale=1.0, fmt="{:.2f}"):
    """Median of key over the runs, with the min-max range when they differ."""
    xs = [v[key] * scale for v in values if key in v]
    if not xs:
        return "-"
    med = fmt.format(statistics.median(xs))
    lo, hi = fmt.format(min(xs)), fmt.format(max(xs))
    return med if lo == hi else f"{med} ({lo}-{hi})"


def mib(path):
    return f"{os.path.getsize(path) / 2**20:.1f}"


def main():
    fbfile, work, runs, gui = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    cases = [c.split(",") for c in sys.argv[5:]]
    results = {(c[0], tool): [] for c in cases for tool in ("h", "m", "t")}
    failures, skipped = [], set()
    with open(os.path.join(work, "gui.log"), "w") as log:
        for run in range(runs + 1):  # run 0 warms the page cache and the symbol caches
            for name, _, zst, mtr in cases:
                jobs = []
                if zst != "-":
                    jobs.append(("h", lambda: time_heaptrack_gui(fbfile, zst, log)))
                if gui != "-":
                    err = os.path.join(work, "memtrail-gui.err")
                    jobs.append(("m", lambda: time_memtrail_gui(gui, mtr, "summary", err, log)))
                    # Only the visible view paints: a second launch shows the timeline.
                    if "timeline" not in skipped:
                        jobs.append(("t", lambda: time_memtrail_gui(gui, mtr, "timeline", err, log)))
                for tool, job in jobs:
                    log.write(f"== run {run} {name} {tool}\n")
                    log.flush()
                    try:
                        row = job()
                    except RuntimeError as e:
                        if tool == "t" and "unknown view" in str(e):
                            skipped.add("timeline")  # a memtrail-gui without it: say so once
                            failures.append(f"no timeline view: {e}")
                        else:
                            failures.append(f"run {run}, {name}: {e}")
                        continue
                    print(f"run {run} {name} {tool}: " +
                          " ".join(f"{k}={v:.3f}" for k, v in row.items()), file=sys.stderr)
                    if run > 0:
                        results[(name, tool)].append(row)
    print(f"{runs} alternating runs after one warm-up, medians (min-max); seconds from launch")
    print("| trace | events | program | file MiB | summary shown | timeline painted"
          " | all views ready | peak MiB | cpu s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, events, zst, mtr in cases:
        h, m, t = (results[(name, tool)] for tool in ("h", "m", "t"))
        if zst == "-":
            print(f"| {name} | {int(events):,} | heaptrack_gui | - | no trace:"
                  " heaptrack_interpret failed | | | | |")
        else:
            print(f"| {name} | {int(events):,} | heaptrack_gui | {mib(zst)}"
                  f" | {cell(h, 'summary')} | - | {cell(h, 'all tabs')}"
                  f" | {cell(h, 'peak MiB', fmt='{:.0f}')} | {cell(h, 'cpu s')} |")
        if gui != "-":
            print(f"| {name} | {int(events):,} | memtrail-gui | {mib(mtr)}"
                  f" | {cell(m, 'summary-painted')} | {cell(t, 'timeline-painted')}"
                  f" | {cell(m, 'all-ready')} (exit {cell(m, 'exit')})"
                  f" | {cell(m, 'peak MiB', fmt='{:.0f}')} | {cell(m, 'cpu s')} |")
    for name, *_ in cases:
        m = results[(name, "m")]
        own = {k for row in m for k in row if not k.endswith(" cpu")} - {"exit", "peak MiB", "cpu s"}
        keys = sorted(own, key=lambda k: statistics.median(
            row[k] for row in m if k in row))
        if keys:
            print(f"memtrail-gui events, {name}, medians: " +
                  ", ".join(f"{k} {cell(m, k)}" for k in keys))
    for f in failures:
        print(f"FAILED: {f}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
