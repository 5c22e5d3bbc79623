#!/bin/sh
# The tracer benchmark suite: every workload untraced, under `memtrail run`
# and under heaptrack, interleaved, one table (worst case last). See
# bench/suite.py for the columns and options.
#
#   bench/suite.sh BUILD_DIR [--runs N] [--only NAME,...] [--baseline DIR]
exec /usr/bin/python3 "$(dirname "$0")/suite.py" "$@"
