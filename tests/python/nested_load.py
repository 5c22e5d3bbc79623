# One Python line, the same in every run, whose native path through the
# interpreter is as deep as its input: marshal.loads recurses once per
# nesting level (CPython's r_object, a static function: nameless in
# Debian's stripped python3.11) before it makes the 5,000-character string.
# `memtrail diff` of `nested_load.py 3` and `nested_load.py 6` must see
# the LOAD line as one site, unchanged (tests/python/python_api_test.cpp).
import marshal
import sys

depth = int(sys.argv[1])
obj = "x" * 5000
for _ in range(depth):
    obj = [obj]
blob = marshal.dumps(obj)
kept = []


def load():
    kept.append(marshal.loads(blob))  # LOAD


for step in range(10):
    load()
print(len(kept))
