#!/bin/bash
# Runs pool_ops.cpp against this tree's allocator and against REV's (default
# the parent of the first pool speed-up, 22f8bd5) and compares the outputs
# byte for byte: a refactoring of the pools must not change any pointer,
# stat, snapshot or summary. Runs the original mix (seeds 1-3), then the
# `repeat` mix (alloc/free/alloc of one size in a row, broken by every other
# kind of call) with SEEDS seeds single-threaded and SEEDS more with a second
# thread alive (locked paths). Needs a built tree (build/lib). ~1-2 minutes.
#   tests/allocator/differential/compare_with_revision.sh [REV [SEEDS]]
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
rev=${1:-22f8bd5}
seeds=${2:-20}
work=$(mktemp -d /tmp/memtrail-pool-diff.XXXXXX)
trap 'rm -rf "$work"' EXIT
git -C "$root" archive "$rev" allocator | tar -x -C "$work"
libs=("$root/build/lib/libmemtrail.so" "$root/build/lib/libmemtrail_format.a" -lzstd -lz -lpthread
      -Wl,-rpath,"$root/build/lib")
flags=(-O1 -std=c++20 -I"$root/tracer/include")
mkdir "$work/obj"
for f in "$work"/allocator/src/*.cpp; do
  c++ "${flags[@]}" -I"$work/allocator/include" -c "$f" -o "$work/obj/$(basename "$f" .cpp).o" &
done
wait
c++ "${flags[@]}" -I"$work/allocator/include" "$root/tests/allocator/differential/pool_ops.cpp" \
  "$work"/obj/*.o "${libs[@]}" -o "$work/old"
c++ "${flags[@]}" -I"$root/allocator/include" "$root/tests/allocator/differential/pool_ops.cpp" \
  "$root/build/lib/libmemtrail_allocator.a" "${libs[@]}" -o "$work/new"
status=0
compare() {  # NAME ARGS...
  local name=$1
  shift
  "$work/old" "$@" > "$work/old.txt"
  "$work/new" "$@" > "$work/new.txt"
  if cmp -s "$work/old.txt" "$work/new.txt"; then
    echo "identical: $name, $(wc -l < "$work/new.txt") lines ($rev vs working tree)"
  else
    echo "DIFFERENT: $name ($rev vs working tree); first difference:"
    diff "$work/old.txt" "$work/new.txt" | head -5
    status=1
  fi
}
compare "original mix"
compare "repeat mix, seeds 1-$seeds" repeat 1 "$seeds"
compare "repeat mix with a second thread, seeds 1001-$((1000 + seeds))" repeat-mt 1001 "$seeds"
exit $status
