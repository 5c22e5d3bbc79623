#!/bin/bash
# Runs pool_ops.cpp against this tree's allocator and against REV's (default
# the parent of the first pool speed-up, 22f8bd5) and compares the outputs
# byte for byte: a refactoring of the pools must not change any pointer,
# stat, snapshot or summary. Needs a built tree (build/lib). Takes ~1 minute.
#   tests/allocator/differential/compare_with_revision.sh [REV]
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
rev=${1:-22f8bd5}
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
"$work/old" > "$work/old.txt"
"$work/new" > "$work/new.txt"
if cmp -s "$work/old.txt" "$work/new.txt"; then
  echo "identical: $(wc -l < "$work/new.txt") lines ($rev vs working tree)"
else
  echo "DIFFERENT ($rev vs working tree); first difference:"
  diff "$work/old.txt" "$work/new.txt" | head -5
  exit 1
fi
