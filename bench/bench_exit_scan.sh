#!/usr/bin/env bash
# Cost of the exit-time leak scan's stop-the-world on a program whose
# threads all hold heap blocks (bench/workloads/exit_held_threads.cpp).
#
#   bench/bench_exit_scan.sh BUILD_DIR [RUNS=5] [THREADS=64] [BLOCKS=256]
#
# Runs exit_held_threads untraced, under `memtrail run` with MEMTRAIL_LEAK_SCAN=0
# and with the scan (default), interleaved so machine noise hits every mode
# alike. Prints per mode the median and range of the exit time (main's return
# to the process's end, as the calling shell sees it) and of the whole run.
set -euo pipefail

build=$(cd "${1:?usage: bench_exit_scan.sh BUILD_DIR [RUNS] [THREADS] [BLOCKS]}" && pwd)
runs=${2:-5}
threads=${3:-64}
blocks=${4:-256}
prog=$build/bin/exit_held_threads
for tool in "$build/bin/memtrail" "$prog"; do
  [[ -x $tool ]] || { echo "bench_exit_scan.sh: $tool is missing" >&2; exit 2; }
done
work=$(mktemp -d /tmp/memtrail-bench-exit-XXXXXX)
trap 'rm -rf "$work"' EXIT

run_once() {  # MODE: prints "MODE EXIT_MS WHOLE_MS"
  local mode=$1 start out end
  start=$(date +%s%N)
  case $mode in
    untraced) out=$("$prog" "$threads" "$blocks") ;;
    scan-off) out=$(MEMTRAIL_LEAK_SCAN=0 "$build/bin/memtrail" run -q -o "$work/run" -- \
      "$prog" "$threads" "$blocks") ;;
    scan-on) out=$("$build/bin/memtrail" run -q -o "$work/run" -- "$prog" "$threads" "$blocks") ;;
  esac
  end=$(date +%s%N)
  local exit_at=${out##*exit_at }
  echo "$mode $(((end - exit_at) / 1000))e-3 $(((end - start) / 1000))e-3"
}

for ((r = 0; r < runs; ++r)); do
  for mode in untraced scan-off scan-on; do run_once "$mode" >> "$work/times"; done
done
echo "exit_held_threads $threads threads x $blocks blocks, $runs runs; ms: median (min-max)"
for mode in untraced scan-off scan-on; do
  awk -v m="$mode" 'BEGIN { n = 0 } $1 == m { e[n] = $2 + 0; w[n] = $3 + 0; ++n }
    function med(a, n,   i, j, t) {
      for (i = 0; i < n; ++i) for (j = i + 1; j < n; ++j) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
      return sprintf("%.1f (%.1f-%.1f)", n % 2 ? a[(n - 1) / 2] : (a[n / 2 - 1] + a[n / 2]) / 2, a[0], a[n - 1])
    }
    END { printf "%-9s exit %s  whole run %s\n", m, med(e, n), med(w, n) }' "$work/times"
done
