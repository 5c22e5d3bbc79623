#!/bin/bash
# Instructions per cached alloc+free pair (glibc, CachingPool, BfcPool), from
# callgrind runs of N and 2N pairs: load-independent, unlike the timings.
# Needs a built tree (cmake --build build --target memtrail_allocator) and
# valgrind. The last row alternates a 64 B and a 4 KiB pair, which the
# pools' pending undo cannot shortcut (each free is done in full).
# Usage: bench/bench_allocator_instructions.sh [N]
# ALLOCATOR_LIB=path/libmemtrail_allocator.a (with its headers in
# ALLOCATOR_INCLUDE) measures another build, e.g. an older revision's.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
n=${1:-20000}
lib=${ALLOCATOR_LIB:-$root/build/lib/libmemtrail_allocator.a}
include=${ALLOCATOR_INCLUDE:-$root/allocator/include}
bin=$(mktemp /tmp/bench_allocator_pairs.XXXXXX)
trap 'rm -f "$bin"' EXIT
c++ -O2 -std=c++20 -I"$include" -I"$root/tracer/include" \
  "$root/bench/bench_allocator_pairs.cpp" "$lib" \
  "$root/build/lib/libmemtrail.so" "$root/build/lib/libmemtrail_format.a" -lzstd -lz -lpthread \
  -Wl,-rpath,"$root/build/lib" -o "$bin"
count() { valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" "$1" "$2" "$3" 2>&1 |
  awk '/refs:/ { gsub(",", "", $4); print $4 }'; }
printf '%-10s %8s %8s %8s\n' size malloc caching bfc
for size in 64 4096 1048576 67108864 64,4096; do
  row=$(printf '%-10s' "$size")
  for kind in malloc caching bfc; do
    a=$(count "$n" "$size" "$kind")
    b=$(count $((2 * n)) "$size" "$kind")
    row+=$(printf ' %8d' $(((b - a) / n)))
  done
  echo "$row"
done
