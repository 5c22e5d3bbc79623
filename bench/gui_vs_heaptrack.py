#!/usr/bin/env python3
"""Times heaptrack_gui and memtrail-gui on the same program's traces.

Run by bench/gui_vs_heaptrack.sh inside one Xvfb whose framebuffer is a
file (bench/gui_bench.py: what this and gui_tabs_vs_heaptrack.py share).

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
import os
import statistics
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gui_bench import (cell, heaptrack_gui_until_quiet, mib, print_failures,  # noqa: E402
                       run_alternating, time_memtrail_gui)


def time_heaptrack_gui(fbfile, zst, log):
    blank_band, shots, peak, cpu = heaptrack_gui_until_quiet(
        fbfile, zst, log, (f"while loading {zst}", f"{zst} not loaded"))
    final = shots[-1]
    if final[2] == blank_band:  # nothing drawn where the numbers should be
        raise RuntimeError(f"heaptrack_gui showed no summary numbers for {zst}")
    summary = next(t for t, _, b in shots if b == final[2])
    loaded = next(t for t, w, _ in shots if w == final[1])
    return {"summary": summary, "all tabs": loaded, "peak MiB": peak, "cpu s": cpu}


def main():
    fbfile, work, runs, gui = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    cases = [c.split(",") for c in sys.argv[5:]]
    skipped = set()
    err = os.path.join(work, "memtrail-gui.err")

    def jobs_of(case, log):
        _, _, zst, mtr = case
        jobs = []
        if zst != "-":
            jobs.append(("h", lambda: time_heaptrack_gui(fbfile, zst, log)))
        if gui != "-":
            jobs.append(("m", lambda: time_memtrail_gui(gui, mtr, "summary", err, log)))
            # Only the visible view paints: a second launch shows the timeline.
            if "timeline" not in skipped:
                jobs.append(("t", lambda: time_memtrail_gui(gui, mtr, "timeline", err, log)))
        return jobs

    def failure(run, name, tool, e):
        if tool == "t" and "unknown view" in str(e):
            skipped.add("timeline")  # a memtrail-gui without it: say so once
            return f"no timeline view: {e}"
        return f"run {run}, {name}: {e}"

    results, failures = run_alternating(work, runs, cases, jobs_of, failure)
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
    return print_failures(failures)


if __name__ == "__main__":
    sys.exit(main())
