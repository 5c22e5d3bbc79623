# Python workload for the cost of Python frames (docs/BENCHMARKS.md,
# "Python frames"): N bytearray(600) (past pymalloc's 512 B, so malloc'ed),
# each made three Python calls deep and freed at once.
#
#   memtrail run -q -o run -- /usr/bin/python3 python_allocs.py 2000000
import sys


def make():
    return bytearray(600)


def middle():
    return make()


def outer():
    return middle()


for _ in range(int(sys.argv[1]) if len(sys.argv) > 1 else 2000000):
    outer()
