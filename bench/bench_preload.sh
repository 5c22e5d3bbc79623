#!/usr/bin/env bash
# Preload tracer overhead, side by side with heaptrack, on samples/churn.
#
#   bench/bench_preload.sh BUILD_DIR [RUNS=5] [PAIRS=2000000]
#
# CHURN=churn-fp runs the same workload built with frame pointers.
#
# Runs, interleaved so machine noise hits every mode alike: churn plain,
# under `memtrail run` (stacks on, and --no-stacks), and under `heaptrack`.
# Reports the median wall time, cpu time (user + sys of the process tree)
# and max RSS of each mode (GNU time: %e, %U + %S, %M;
# %M is the largest process of the tree, which for heaptrack is its
# interpreter), the ratio to plain, and the tracing machinery's resident
# memory = median max RSS minus plain's. Prints a Markdown table.
#
# With BASELINE_LIB=DIR (a directory holding another build's libmemtrail.so)
# a mode `memtrail_baseline` runs the same memtrail with that recorder, in
# the same interleaving: before/after figures from one run. When DIR/../bin
# holds a memtrail binary, that one runs, so libmemtrail_preload.so comes
# from DIR too (`memtrail run` takes it from <its dir>/../lib): needed when
# the two libraries of the baseline and of this build do not mix.
set -euo pipefail

build=$(cd "${1:?usage: bench_preload.sh BUILD_DIR [RUNS] [PAIRS]}" && pwd)
runs=${2:-5}
pairs=${3:-2000000}
churn="$build/bin/${CHURN:-churn}"
memtrail="$build/bin/memtrail"
for tool in "$churn" "$memtrail" /usr/bin/time; do
  [[ -x $tool ]] || { echo "bench_preload.sh: $tool is missing" >&2; exit 2; }
done
have_heaptrack=1
command -v heaptrack > /dev/null || have_heaptrack=0

work=$(mktemp -d /tmp/memtrail-bench-XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work"

baseline=${BASELINE_LIB:-}
[[ -z $baseline || -f $baseline/libmemtrail.so ]] || {
  echo "bench_preload.sh: $baseline/libmemtrail.so is missing" >&2
  exit 2
}
baseline_memtrail=$memtrail
[[ -n $baseline && -x $baseline/../bin/memtrail ]] && baseline_memtrail=$(cd "$baseline/../bin" && pwd)/memtrail
export churn memtrail work pairs baseline baseline_memtrail
modes=(plain memtrail memtrail_nostacks)
[[ -n $baseline ]] && modes+=(memtrail_baseline)
((have_heaptrack)) && modes+=(heaptrack)

run_mode() {
  case $1 in
    plain) "$churn" "$pairs" ;;
    memtrail) "$memtrail" run -o "$work/m.mtr" -- "$churn" "$pairs" ;;
    memtrail_nostacks) "$memtrail" run --no-stacks -o "$work/n.mtr" -- "$churn" "$pairs" ;;
    memtrail_baseline) LD_LIBRARY_PATH="$baseline" "$baseline_memtrail" run -o "$work/b.mtr" -- "$churn" "$pairs" ;;
    heaptrack) heaptrack -o "$work/ht" "$churn" "$pairs" ;;
  esac
}

for ((i = 0; i < runs; i++)); do
  for mode in "${modes[@]}"; do
    # m and n are run directories (memtrail run -o DIR); an older baseline writes files.
    rm -rf "$work"/m.mtr "$work"/n.mtr "$work"/b.mtr "$work"/ht.*
    /usr/bin/time -o "$work/time.txt" -f "%e %M %U %S" bash -c "$(declare -f run_mode); run_mode $mode" \
      > "$work/out.txt" 2> /dev/null
    read -r wall rss user sys < "$work/time.txt"
    echo "$wall" >> "$work/$mode.wall"
    echo "$rss" >> "$work/$mode.rss"
    awk -v u="$user" -v s="$sys" 'BEGIN { print u + s }' >> "$work/$mode.cpu"
    if [[ $mode == memtrail ]]; then cat "$work"/m.mtr/*.mtr | wc -c >> "$work/$mode.bytes"; fi
    if [[ $mode == heaptrack ]]; then stat -c %s "$work"/ht.* 2> /dev/null | head -1 >> "$work/$mode.bytes" || true; fi
  done
done

median() { sort -g "$1" | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

plain_wall=$(median "$work/plain.wall")
plain_rss=$(median "$work/plain.rss")
plain_cpu=$(median "$work/plain.cpu")
echo "${CHURN:-churn} $pairs pairs, $runs runs per mode, interleaved; $(nproc) CPUs; $(date -u +%Y-%m-%d)"
echo
echo "| mode | wall median (s) | vs plain | cpu median (s) | cpu vs plain | max RSS median (MB) | machinery RSS (MB) | trace bytes |"
echo "|---|---|---|---|---|---|---|---|"
for mode in "${modes[@]}"; do
  wall=$(median "$work/$mode.wall")
  rss=$(median "$work/$mode.rss")
  cpu=$(median "$work/$mode.cpu")
  bytes="-"
  [[ -s $work/$mode.bytes ]] && bytes=$(median "$work/$mode.bytes")
  awk -v m="$mode" -v w="$wall" -v pw="$plain_wall" -v c="$cpu" -v pc="$plain_cpu" -v r="$rss" \
    -v pr="$plain_rss" -v b="$bytes" 'BEGIN { printf "| %s | %.2f | %.1fx | %.2f | %.1fx | %.1f | %.1f | %s |\n",
      m, w, w / pw, c, c / pc, r / 1024, (r - pr) / 1024, b }'
done
