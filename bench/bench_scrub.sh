#!/usr/bin/env bash
# Cost of MEMTRAIL_SCRUB (zeroing new heap blocks while tracing), paired.
#
#   bench/bench_scrub.sh BUILD_DIR [RUNS=7] [PAIRS=2000000]
#
# Runs churn PAIRS, churn-fp PAIRS and threads (defaults), each plain and
# under `memtrail run` with MEMTRAIL_SCRUB=0, =alloc and =4096, interleaved
# so machine noise hits every mode alike. Prints per workload the median wall
# and cpu (user + sys of the process tree, GNU time) of each mode, its ratio
# to scrub off, and the median of the per-round wall ratios (paired).
set -euo pipefail

build=$(cd "${1:?usage: bench_scrub.sh BUILD_DIR [RUNS] [PAIRS]}" && pwd)
runs=${2:-7}
pairs=${3:-2000000}
for tool in "$build/bin/memtrail" "$build/bin/churn" "$build/bin/churn-fp" \
  "$build/bin/threads" /usr/bin/time; do
  [[ -x $tool ]] || { echo "bench_scrub.sh: $tool is missing" >&2; exit 2; }
done
work=$(mktemp -d /tmp/memtrail-bench-scrub-XXXXXX)
trap 'rm -rf "$work"' EXIT

for ((r = 0; r < runs; ++r)); do
  for workload in "churn $pairs" "churn-fp $pairs" "threads"; do
    set -- $workload
    prog=$1
    shift
    /usr/bin/time -f "$prog plain %e %U %S" -a -o "$work/times" "$build/bin/$prog" "$@" > /dev/null
    for mode in 0 alloc 4096; do
      MEMTRAIL_SCRUB=$mode /usr/bin/time -f "$prog $mode %e %U %S" -a -o "$work/times" \
        "$build/bin/memtrail" run -o "$work/t.mtr" -- "$build/bin/$prog" "$@" > /dev/null 2>&1
      rm -rf "$work"/t.mtr*
    done
  done
done

python3 - "$work/times" <<'PY'
import collections, statistics as st, sys
d = collections.defaultdict(list)
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) == 5:
        d[(f[0], f[1])].append((float(f[2]), float(f[3]) + float(f[4])))
print("| workload | plain wall | scrub off wall / cpu | alloc wall / cpu (vs off, paired) | 4096 wall / cpu (vs off, paired) |")
print("|---|---|---|---|---|")
for w in ("churn", "churn-fp", "threads"):
    med = lambda m, i: st.median(x[i] for x in d[(w, m)])
    off_w, off_c = med("0", 0), med("0", 1)
    cells = []
    for m in ("alloc", "4096"):
        paired = st.median(b[0] / a[0] for a, b in zip(d[(w, "0")], d[(w, m)]))
        cells.append("%.2f / %.2f (%.2fx / %.2fx, %.2fx)" % (med(m, 0), med(m, 1), med(m, 0) / off_w,
                                                            med(m, 1) / off_c, paired))
    print("| %s | %.2f | %.2f / %.2f | %s | %s |" % (w, med("plain", 0), off_w, off_c, *cells))
PY
