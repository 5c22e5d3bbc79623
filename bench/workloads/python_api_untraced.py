# What the Python module costs a program that is not traced (issue 29:
# "outside `memtrail run` they do nothing and cost nothing measurable"):
# importing it, and a loop of N empty iterations bare, marked with
# `with memtrail.iteration("step"):`, and with memtrail.mark("step").
# Best of 5 rounds each. Run untraced with the module on the path:
#
#   PYTHONPATH=build/lib/memtrail/python /usr/bin/python3 \
#       bench/workloads/python_api_untraced.py [N]
import sys
import time

t0 = time.perf_counter()
import memtrail  # noqa: E402

import_ms = (time.perf_counter() - t0) * 1e3
n = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000


def bare():
    for _ in range(n):
        pass


def with_iteration():
    for _ in range(n):
        with memtrail.iteration("step"):
            pass


def with_mark():
    for _ in range(n):
        memtrail.mark("step")


def best_ns(loop):
    best = float("inf")
    for _ in range(5):
        t = time.perf_counter()
        loop()
        best = min(best, time.perf_counter() - t)
    return best / n * 1e9


base = best_ns(bare)
it = best_ns(with_iteration)
mk = best_ns(with_mark)
print(f"{'traced' if memtrail.tracing() else 'untraced'}: import memtrail {import_ms:.1f} ms; "
      f"empty loop {base:.0f} ns/iter, with memtrail.iteration {it:.0f} ns/iter (+{it - base:.0f}), "
      f"with memtrail.mark {mk:.0f} ns/iter (+{mk - base:.0f})")
