# A loop that keeps one 4096-byte bytearray per step (the leak `memtrail
# check --iteration-mark step --max-scope-growth 0` must find), beside one
# it frees each step. With the argument "fixed": keeps nothing.
import sys

import memtrail

fixed = sys.argv[1:] == ["fixed"]
kept = []


def one_step():
    scratch = bytearray(8192)  # freed every step
    block = bytearray(4096)  # KEEP
    if not fixed:
        kept.append(block)


# A few steps unmarked first: CPython sets up its own caches (a pymalloc
# arena table, specialized code) in the first ones, once; marked, those
# one-off blocks would read as growth.
for step in range(10):
    one_step()
for step in range(50):
    with memtrail.iteration("step"):
        one_step()
print("steps done, kept", len(kept))
