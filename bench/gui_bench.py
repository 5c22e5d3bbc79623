"""What bench/gui_vs_heaptrack.py and bench/gui_tabs_vs_heaptrack.py share:
reading the Xvfb framebuffer, launching heaptrack_gui and memtrail-gui and
timing them, the alternating runs, and the table's cells.

Both run inside one Xvfb whose framebuffer is a file (Xvfb -fbdir): polling
the screen is then a read of that file, with no X request that would
compete with the GUI for the 2 cores.
"""
import collections
import hashlib
import os
import re
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


def heaptrack_gui_until_quiet(fbfile, zst, log, errors, after_shot=None, at_quiet=None):
    """Launches heaptrack_gui on zst and takes a screenshot every POLL_S s
    until the screen, no longer blank, has not changed for QUIET_S s; then
    at_quiet(), and heaptrack_gui is ended. after_shot() runs after each
    screenshot. errors = (what it was doing when it exited, what was not
    ready after TIMEOUT_S), for the messages.
    Returns (summary band of the blank screen, shots, peak MiB, cpu s);
    shots = [(seconds since launch, whole screen, summary band)]."""
    exited_while, not_ready = errors
    blank, blank_band = read_frame(fbfile)
    start = time.monotonic()
    proc = subprocess.Popen(["heaptrack_gui", zst], stdout=log, stderr=log)
    shots = []
    quiet = int(QUIET_S / POLL_S)
    while True:
        time.sleep(max(0.0, start + (len(shots) + 1) * POLL_S - time.monotonic()))
        whole, band = read_frame(fbfile)
        shots.append((time.monotonic() - start, whole, band))
        if after_shot:
            after_shot()
        if reap(proc, block=False) is not None:
            raise RuntimeError(f"heaptrack_gui exited ({proc.returncode}) {exited_while}")
        if shots[-1][0] > TIMEOUT_S:
            proc.kill()
            reap(proc, block=True)
            raise RuntimeError(f"heaptrack_gui: {not_ready} after {TIMEOUT_S:.0f} s")
        last = [s[1] for s in shots[-quiet - 1:]]
        if len(last) > quiet and whole != blank and len(set(last)) == 1:
            break
    if at_quiet:
        at_quiet()
    proc.terminate()
    _, peak, cpu = reap(proc, block=True)
    return blank_band, shots, peak, cpu


TIMING = re.compile(r"^memtrail-gui: timing (\S+) (\d+(?:\.\d+)?)(?: cpu (\d+(?:\.\d+)?))?\s*$")


def time_memtrail_gui(gui, mtr, view, errfile, log):
    """memtrail-gui MTR --view VIEW under MEMTRAIL_GUI_TIMING=exit: its own
    timing lines (EVENT: seconds; "EVENT cpu": its CPU seconds at the mark),
    and the launch-to-exit wall time, peak MiB and cpu s of the process."""
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


def run_alternating(work, runs, cases, jobs_of, failure):
    """Runs the jobs of every case in turn, runs + 1 times: run 0 warms the
    page cache and the symbol caches and is not kept. jobs_of(case, log)
    gives [(key, job)] (log: the GUIs' output file); a job returns a row (a dict of figures) or raises
    RuntimeError, which failure(run, name, key, error) turns into a line
    (or None: nothing to say). Each row goes to stderr as it comes.
    Returns ({(case name, key): [rows of the kept runs]}, [failure lines])."""
    results, failures = collections.defaultdict(list), []
    with open(os.path.join(work, "gui.log"), "w") as log:
        for run in range(runs + 1):
            for case in cases:
                name = case[0]
                for key, job in jobs_of(case, log):
                    log.write(f"== run {run} {name} {key}\n")
                    log.flush()
                    try:
                        row = job()
                    except RuntimeError as e:
                        line = failure(run, name, key, e)
                        if line:
                            failures.append(line)
                        continue
                    print(f"run {run} {name} {key}: " +
                          " ".join(f"{k}={v:.3f}" for k, v in row.items()), file=sys.stderr)
                    if run > 0:
                        results[(name, key)].append(row)
    return results, failures


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


def print_failures(failures):
    """The failure lines, last; the exit status: 1 if any."""
    for f in failures:
        print(f"FAILED: {f}")
    return 1 if failures else 0
