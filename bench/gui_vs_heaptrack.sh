#!/bin/sh
# memtrail-gui vs heaptrack_gui, side by side on traces of one program
# (bench/gui_churn: the anchor's churn, shared/reference/heaptrack-gui):
# 10^6 and 10^7 allocations (~2*10^6 and ~2*10^7 events, ~20 stacks), and
# 4*10^4 allocations over 10^4 call paths and 4*10^5 over 115000 (~1.1*10^5
# distinct stacks: the anchor's many-stacks trace). Each is traced once
# with `heaptrack -r -o` (then heaptrack_interpret) and once with
# `memtrail run -o`; then both GUIs open each trace in one Xvfb (1600x1000),
# alternating, RUNS times after a warm-up run; bench/gui_vs_heaptrack.py
# does the timing and prints one table of medians. Without BUILD_DIR/bin/memtrail-gui only heaptrack_gui is
# timed.
#
#   bench/gui_vs_heaptrack.sh BUILD_DIR [RUNS]
#
# Traces go to a directory under ~/.cache/memtrail-bench removed at exit; set
# MEMTRAIL_BENCH_TRACES=DIR to keep them there and reuse them next time
# (delete DIR after changing gui_churn or the trace format).
set -eu
build=${1:?usage: gui_vs_heaptrack.sh BUILD_DIR [RUNS]}
runs=${2:-3}
here=$(cd "$(dirname "$0")" && pwd)
me=gui_vs_heaptrack
. "$here/gui_bench.sh"
need_tools "apt install heaptrack heaptrack-gui xvfb python3 zstd" \
  heaptrack heaptrack_gui xvfb-run Xvfb python3 zstd
bin=$(cd "$build/bin" && pwd)
need_bins memtrail gui_churn
gui=-
[ -x "$bin/memtrail-gui" ] && gui=$bin/memtrail-gui
[ "$gui" = - ] && echo "gui_vs_heaptrack: no $bin/memtrail-gui: timing heaptrack_gui only" >&2

make_work gui

# heaptrack -r records the raw trace only; the interpreter runs here with a
# time and memory cap: heaptrack 1.4's heaptrack_interpret loops, growing
# past the 2 GiB cap (to 18 GiB without it), on gui_churn's trace of 4e5
# allocations over 115000 paths (docs/BENCHMARKS.md); that case then has
# no heaptrack_gui row.
heaptrack_record() {
  out=$1
  shift
  heaptrack -r -o "$out" "$@" >"$work/record.log" 2>&1 || { cat "$work/record.log" >&2; exit 1; }
  interpret=$(sed -n 's/.*| *\([^ ]*heaptrack_interpret\) *|.*/\1/p' "$work/record.log")
  [ -x "$interpret" ] || { echo "gui_vs_heaptrack: heaptrack -r named no interpreter" >&2; exit 1; }
  # The interpreter's exit status, not zstd's: a cut-off output is no trace.
  (ulimit -v 2097152 && {
    zstd -dc <"$out.raw.zst" | timeout 300 "$interpret" && status=0 || status=$?
    echo "$status" >"$out.status"
  } | zstd -q -c >"$out.zst.part") 2>>"$work/record.log"
  if [ "$(cat "$out.status")" = 0 ]; then
    mv "$out.zst.part" "$out.zst"
  else
    echo "gui_vs_heaptrack: heaptrack_interpret failed on $out.raw.zst: no heaptrack_gui timing for it" >&2
    rm -f "$out.zst.part"
    : >"$out.zst.failed"
  fi
  rm -f "$out.raw.zst" "$out.status"
}

# record NAME ARGS...: NAME.zst (heaptrack) and NAME.run/*.mtr (memtrail) of gui_churn ARGS.
record() {
  name=$1
  shift
  [ -s "$traces/$name.zst" ] || [ -e "$traces/$name.zst.failed" ] ||
    heaptrack_record "$traces/$name" "$bin/gui_churn" "$@"
  zst=$traces/$name.zst
  [ -s "$zst" ] || zst=-
  memtrail_record "$name" "$bin/gui_churn" "$@"
  "$bin/memtrail" report --json --no-symbols "$mtr" >"$work/report.json" ||
    { echo "gui_vs_heaptrack: memtrail report failed on $mtr" >&2; exit 1; }
  events=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["summary"]["events"])' \
    "$work/report.json")
  cases="$cases $name,$events,$zst,$mtr"
}
cases=
record churn-1e6 1000000
record churn-1e7 10000000
record stacks-1e4 40000 10000
record stacks-1e5 400000 115000

in_xvfb "$here/gui_vs_heaptrack.py" "$runs" "$gui" $cases
