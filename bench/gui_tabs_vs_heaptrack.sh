#!/bin/sh
# Call tree and flame graph tabs, memtrail-gui beside heaptrack_gui (issue
# 30): how long after the summary each is drawn, and peak memory, on the
# traces of two programs, each traced once by `heaptrack -o` and once by
# `memtrail run -o`:
#   churn-1e7  bench/gui_churn 10000000            (~2*10^7 events)
#   ds-1e5     distinct_stacks 100000 27 500000    (10^5 distinct stacks)
# heaptrack_interpret runs under a 6 GiB address-space cap: on distinct_stacks
# it grows past it (as on gui_churn's many-paths trace, docs/BENCHMARKS.md),
# and that case then has no heaptrack_gui row. bench/gui_tabs_vs_heaptrack.py
# does the timing (its header says how) in one Xvfb (1600x1000).
#
#   bench/gui_tabs_vs_heaptrack.sh BUILD_DIR [RUNS]
#
# BUILD_DIR needs bin/memtrail, bin/memtrail-gui, bin/gui_churn and
# bin/distinct_stacks. Traces go to a directory under ~/.cache/memtrail-bench
# removed at exit; MEMTRAIL_BENCH_TRACES=DIR keeps them there for next time.
set -eu
build=${1:?usage: gui_tabs_vs_heaptrack.sh BUILD_DIR [RUNS]}
runs=${2:-3}
here=$(cd "$(dirname "$0")" && pwd)
me=gui_tabs_vs_heaptrack
. "$here/gui_bench.sh"
need_tools "apt install heaptrack heaptrack-gui xvfb xdotool python3" \
  heaptrack heaptrack_gui xvfb-run Xvfb xdotool python3
bin=$(cd "$build/bin" && pwd)
need_bins memtrail memtrail-gui gui_churn distinct_stacks

make_work tabs

# record NAME PROGRAM ARGS...: NAME.zst (heaptrack; NAME.zst.failed when its
# interpreter fails) and NAME.run (memtrail), unless already there.
record() {
  name=$1
  shift
  if [ ! -s "$traces/$name.zst" ] && [ ! -e "$traces/$name.zst.failed" ]; then
    # heaptrack opens heaptrack_gui when done: no display here, so it cannot.
    if (ulimit -v 6291456 && cd "$traces" && DISPLAY= timeout 900 heaptrack -o "$name" "$@") \
      >"$work/record.log" 2>&1 && grep -q "Heaptrack finished" "$work/record.log"; then :; else
      echo "gui_tabs_vs_heaptrack: heaptrack failed on $name (no heaptrack_gui row)" >&2
      rm -f "$traces/$name.zst"
      : >"$traces/$name.zst.failed"
    fi
  fi
  memtrail_record "$name" "$@"
  zst=$traces/$name.zst
  [ -s "$zst" ] || zst=-
  cases="$cases $name,$zst,$mtr"
}
cases=
record churn-1e7 "$bin/gui_churn" 10000000
record ds-1e5 "$bin/distinct_stacks" 100000 27 500000

in_xvfb "$here/gui_tabs_vs_heaptrack.py" "$runs" "$bin/memtrail-gui" $cases
