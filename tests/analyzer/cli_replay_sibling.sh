#!/bin/sh
# `memtrail replay` execs memtrail-replay from the directory of `memtrail`
# ($1). A copy of `memtrail` alone in an empty directory must say so in one
# line and exit 2; beside the real build it must reach memtrail-replay.
set -u
bin=$1
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
dir=$(cd "$dir" && pwd -P)
cp "$bin" "$dir/memtrail" || exit 1
err=$("$dir/memtrail" replay --help 2>&1 >/dev/null)
rc=$?
want="memtrail: replay needs memtrail-replay next to this binary ($dir/memtrail-replay): not found"
if [ "$rc" -ne 2 ] || [ "$err" != "$want" ]; then
  echo "alone: exit $rc, stderr: $err"
  echo "wanted exit 2, stderr: $want"
  exit 1
fi
out=$("$bin" replay --help) || { echo "$bin replay --help failed"; exit 1; }
case $out in
  "usage: memtrail replay "*) ;;
  *) echo "$bin replay --help printed: $out"; exit 1 ;;
esac
echo "ok"
