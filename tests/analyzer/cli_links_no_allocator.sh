#!/bin/sh
# Fails if the `memtrail` binary ($1) links replay's engine again: the
# allocator stack (memtrail::alloc, CachingPool, BfcPool) or the recorder
# (libmemtrail.so) belong to memtrail-replay (allocator/replay_cli).
set -u
bin=$1
symbols=$(nm -C --defined-only "$bin") || { echo "nm failed on $bin"; exit 1; }
# The check means something only where the CLI's own symbols are seen.
echo "$symbols" | grep -q 'memtrail::cli::cmd_report' || { echo "no CLI symbols in $bin"; exit 1; }
alloc=$(echo "$symbols" | grep -E 'memtrail::alloc::|CachingPool|BfcPool')
if [ -n "$alloc" ]; then
  echo "$bin links the allocator stack, e.g.:"
  echo "$alloc" | head -5
  exit 1
fi
needed=$(readelf -d "$bin") || { echo "readelf failed on $bin"; exit 1; }
echo "$needed" | grep -q NEEDED || { echo "no NEEDED entries in $bin"; exit 1; }
if echo "$needed" | grep NEEDED | grep -q 'libmemtrail\.so'; then
  echo "$bin needs the recorder library:"
  echo "$needed" | grep NEEDED
  exit 1
fi
echo "$bin: no allocator symbols, no recorder library"
