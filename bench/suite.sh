#!/bin/sh
# The tracer benchmark suite: every workload untraced, under `memtrail run`
# and under heaptrack, 3 runs interleaved, one table (worst case last).
# Columns and method: docs/BENCHMARKS.md ("How to run the suite"); rows:
# bench/workloads.py.
#
#   bench/suite.sh BUILD_DIR [--quick] [--runs N] [--only NAME,...] [--baseline DIR] [--strict]
exec /usr/bin/python3 "$(dirname "$0")/suite.py" "$@"
