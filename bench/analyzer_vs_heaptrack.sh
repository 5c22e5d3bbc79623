#!/bin/sh
# Side by side, in one run: `memtrail report` vs `heaptrack_print` on traces
# of the same program (samples/churn, 2,000,000 malloc/free pairs = 4M
# events), traced once with `memtrail run` and once with `heaptrack`.
# Alternates the analyzers RUNS times and prints medians and the ratios:
# `memtrail report` with its symbol cache (TRACE.symbols, written by the
# first run) and with --no-symbol-cache (DWARF every time).
#
#   bench/analyzer_vs_heaptrack.sh BUILD_DIR [RUNS] [PAIRS]
set -eu
build=${1:?usage: analyzer_vs_heaptrack.sh BUILD_DIR [RUNS] [PAIRS]}
runs=${2:-5}
pairs=${3:-2000000}
command -v heaptrack >/dev/null && command -v heaptrack_print >/dev/null ||
  { echo "heaptrack/heaptrack_print not installed (apt install heaptrack)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$build/bin/memtrail" run -o "$work/churn.mtr" -- "$build/bin/churn" "$pairs" >/dev/null 2>&1
heaptrack -o "$work/churn" "$build/bin/churn" "$pairs" >/dev/null 2>&1
events=$("$build/bin/memtrail" report --json --no-symbols "$work/churn.mtr" |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["summary"]["events"])')

i=0
while [ "$i" -lt "$runs" ]; do
  /usr/bin/time -f "%e %U %S %M" -a -o "$work/heaptrack.times" \
    heaptrack_print -f "$work/churn.zst" --print-leaks 1 >/dev/null
  /usr/bin/time -f "%e %U %S %M" -a -o "$work/memtrail.times" \
    "$build/bin/memtrail" report "$work/churn.mtr" >/dev/null
  /usr/bin/time -f "%e %U %S %M" -a -o "$work/memtrail_cold.times" \
    "$build/bin/memtrail" report --no-symbol-cache "$work/churn.mtr" >/dev/null
  i=$((i + 1))
done

python3 - "$work" "$events" "$runs" <<'PY'
import statistics, sys
work, events, runs = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def load(name):
    rows = [l.split() for l in open(f"{work}/{name}.times") if l.strip() and l[0].isdigit()]
    wall = statistics.median(float(r[0]) for r in rows)
    cpu = statistics.median(float(r[1]) + float(r[2]) for r in rows)
    rss = statistics.median(int(r[3]) for r in rows)
    return wall, cpu, rss
hw, hc, hr = load("heaptrack")
mw, mc, mr = load("memtrail")
cw, cc, cr = load("memtrail_cold")
print(f"events in the memtrail trace: {events:,}; {runs} alternating runs, medians")
print(f"heaptrack_print -f churn.zst --print-leaks 1 : wall {hw:.3f} s  cpu {hc:.3f} s  maxrss {hr/1024:.1f} MiB")
print(f"memtrail report churn.mtr                   : wall {mw:.3f} s  cpu {mc:.3f} s  maxrss {mr/1024:.1f} MiB")
print(f"memtrail report --no-symbol-cache         : wall {cw:.3f} s  cpu {cc:.3f} s  maxrss {cr/1024:.1f} MiB")
print(f"speedup (heaptrack_print / memtrail report) : wall {hw/mw:.2f}x  cpu {hc/mc:.2f}x")
print(f"speedup, symbols resolved from DWARF        : wall {hw/cw:.2f}x  cpu {hc/cc:.2f}x")
print(f"memtrail events/s (wall)                    : {events/mw/1e6:.1f} M/s")
PY
