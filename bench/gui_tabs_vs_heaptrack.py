#!/usr/bin/env python3
"""Times the call tree and flame graph tabs of heaptrack_gui and memtrail-gui.

Run by bench/gui_tabs_vs_heaptrack.sh inside one Xvfb whose framebuffer is
a file (polled by reading it: bench/gui_bench.py).

  gui_tabs_vs_heaptrack.py FBFILE WORK RUNS MEMTRAIL_GUI CASE...
  CASE = NAME,HEAPTRACK_ZST|-,MEMTRAIL_MTR

heaptrack_gui says nothing when a tab is ready, and its Bottom-Up and Flame
Graph tabs stay disabled until their data is computed. Each launch:
  summary:     no clicks; the summary is shown at the first screenshot whose
               key-number band is as in the final quiet screen
               (gui_vs_heaptrack.py's time_heaptrack_gui);
  Bottom-Up /  a left click on the tab every 0.25 s from launch (xdotool;
  Flame Graph: ignored while the tab is disabled); the tab is drawn at the
               first screenshot equal to the final one, once the screen has
               not changed for QUIET_S s.
memtrail-gui is launched with --view summary, tree and flame under
MEMTRAIL_GUI_TIMING=exit: VIEW-painted is the visible tab drawn with its
data (`memtrail-gui: timing EVENT MS` on stderr); summary-painted comes
from the --view summary launch. "after summary" = the tab's median minus
the same program's summary median. Peak memory is ru_maxrss (wait4). CPU
seconds (user + sys, all threads): heaptrack_gui's for the whole launch
(it computes every tab's data whichever is shown); memtrail-gui's at the
mark ("cpu" of its timing line), since the wall clock on a loaded machine
is mostly the wait for a core.
TAB_SHOTS=DIR saves heaptrack_gui's final screen of each tab there.
"""
import os
import statistics
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gui_bench import (cell, heaptrack_gui_until_quiet, print_failures,  # noqa: E402
                       run_alternating, time_memtrail_gui)
from gui_vs_heaptrack import time_heaptrack_gui  # noqa: E402

# Tab centres in heaptrack_gui 1.4's window at (0, 0) with no window manager.
HEAPTRACK_TABS = {"bottom-up": (136, 37), "flame": (443, 37)}


def time_heaptrack_tab(fbfile, zst, tab, log):
    x, y = HEAPTRACK_TABS[tab]

    def click_tab():
        subprocess.run(["xdotool", "mousemove", str(x), str(y), "click", "1"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def save_screen():
        if os.environ.get("TAB_SHOTS"):  # DIR: the final screen, to look at
            subprocess.run(["import", "-window", "root",
                            os.path.join(os.environ["TAB_SHOTS"], f"heaptrack-{tab}.png")])

    _, shots, peak, cpu = heaptrack_gui_until_quiet(
        fbfile, zst, log, (f"on {zst}", f"{tab} of {zst} not drawn"),
        after_shot=click_tab, at_quiet=save_screen)
    drawn = next(t for t, w, _ in shots if w == shots[-1][1])
    return {tab: drawn, "peak MiB": peak, "cpu s": cpu}


def main():
    fbfile, work, runs, gui = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    cases = [c.split(",") for c in sys.argv[5:]]
    err = os.path.join(work, "memtrail-gui.err")

    def jobs_of(case, log):
        _, zst, mtr = case
        jobs = []
        if zst != "-":
            jobs.append((("h", "summary"), lambda: time_heaptrack_gui(fbfile, zst, log)))
            for tab in ("bottom-up", "flame"):
                jobs.append((("h", tab),
                             lambda tab=tab: time_heaptrack_tab(fbfile, zst, tab, log)))
        for view in ("summary", "tree", "flame"):
            jobs.append((("m", view),
                         lambda view=view: time_memtrail_gui(gui, mtr, view, err, log)))
        return jobs

    results, failures = run_alternating(
        work, runs, cases, jobs_of, lambda run, name, key, e: f"run {run}, {name}, {key}: {e}")
    print(f"{runs} alternating runs after one warm-up, medians (min-max); seconds from launch")
    print("| trace | program | summary shown | call tree drawn (after summary)"
          " | flame graph drawn (after summary) | peak MiB (summary / tree / flame)"
          " | cpu s (summary / tree / flame) |")
    print("|---|---|---|---|---|---|---|")
    for name, zst, mtr in cases:
        def row(tool, summary_key, tabs, cpu_keys):
            s = results[(name, (tool, "summary"))]
            base = statistics.median([r[summary_key] for r in s]) if s else None
            out = [cell(s, summary_key)]
            for tab, key in tabs:
                t = results[(name, (tool, tab))]
                after = (f" (+{statistics.median([r[key] for r in t]) - base:.2f})"
                         if t and base is not None else "")
                out.append(cell(t, key) + after)
            peaks = " / ".join(cell(results[(name, (tool, k))], "peak MiB", fmt="{:.0f}")
                               for k in ("summary",) + tuple(t for t, _ in tabs))
            cpus = " / ".join(cell(results[(name, (tool, k))], c)
                              for k, c in zip(("summary",) + tuple(t for t, _ in tabs), cpu_keys))
            return " | ".join(out) + " | " + peaks + " | " + cpus
        if zst == "-":
            print(f"| {name} | heaptrack_gui | no trace: heaptrack_interpret failed | | | | |")
        else:
            print(f"| {name} | heaptrack_gui | "
                  + row("h", "summary", [("bottom-up", "bottom-up"), ("flame", "flame")],
                      ["cpu s"] * 3) + " |")
        print(f"| {name} | memtrail-gui | "
              + row("m", "summary-painted", [("tree", "tree-painted"), ("flame", "flame-painted")],
                  ["summary-painted cpu", "tree-painted cpu", "flame-painted cpu"])
              + " |")
    return print_failures(failures)


if __name__ == "__main__":
    sys.exit(main())
