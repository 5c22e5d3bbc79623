#!/usr/bin/env python3
"""The oracle (caching_model.py) against the worked replays of the
PyTorch caching allocator notes: the counters PyTorch reports after each
step of a short, hand-checked sequence. Exit 1 naming the first mismatch."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from caching_model import CachingModel  # noqa: E402

MiB = 1 << 20
KEYS = ("allocated_bytes", "reserved_bytes", "requested_bytes", "segment",
        "inactive_split", "inactive_split_bytes")


def expect(model, step, *want):
    stats = model.memory_stats()
    got = tuple(stats[k + ".all.current"] for k in KEYS)
    if got != want:
        sys.exit(f"after {step}: got {dict(zip(KEYS, got))}, want {dict(zip(KEYS, want))}")


def defaults():
    m = CachingModel()
    a = m.malloc(1000)
    expect(m, "A=malloc(1000)", 1024, 2097152, 1000, 1, 1, 2096128)
    b = m.malloc(3 * MiB)
    expect(m, "B=malloc(3 MiB)", 3146752, 23068672, 3146728, 2, 2, 19921920)
    c = m.malloc(12 * MiB)
    expect(m, "C=malloc(12 MiB)", 15729664, 23068672, 15729640, 2, 2, 7339008)
    m.malloc(25_000_000)
    expect(m, "D=malloc(25000000)", 40895488, 48234496, 40729640, 3, 2, 7339008)
    m.free(b)
    expect(m, "free(B)", 37749760, 48234496, 37583912, 3, 3, 10484736)
    m.free(c)
    expect(m, "free(C)", 25166848, 48234496, 25001000, 3, 1, 2096128)
    e = m.malloc(1000)
    expect(m, "E=malloc(1000)", 25167872, 48234496, 25002000, 3, 1, 2095104)
    m.empty_cache()
    expect(m, "empty_cache()", 25167872, 27262976, 25002000, 2, 1, 2095104)
    m.free(a)
    m.free(e)
    m.empty_cache()
    expect(m, "free(A), free(E), empty_cache()", 25165824, 25165824, 25000000, 1, 0, 0)
    if m.malloc(0) is not None:
        sys.exit("malloc(0) must hand out nothing")
    expect(m, "malloc(0)", 25165824, 25165824, 25000000, 1, 0, 0)


def max_split_20():
    m = CachingModel(max_split_size=20 * MiB)
    m.free(m.malloc(24 * MiB))
    expect(m, "max_split 20: 24 MiB malloc+free", 0, 24 * MiB, 0, 1, 0, 0)
    m.malloc(5 * MiB)  # the cached 24 MiB block is oversize: a new segment
    expect(m, "max_split 20: malloc(5 MiB)", 5 * MiB, 44 * MiB, 5 * MiB, 2, 1, 15 * MiB)
    m.malloc(21 * MiB)  # takes the whole 24 MiB block (24 < 21 + 20), unsplit
    expect(m, "max_split 20: malloc(21 MiB)", 29 * MiB, 44 * MiB, 26 * MiB, 2, 1, 15 * MiB)


def rounding():
    m = CachingModel(divisions=lambda size: 4)
    for size, want in ((1200, 1536), (3000, 3072), (int(1.1 * MiB), int(1.25 * MiB)),
                       (4 * MiB, 4 * MiB), (100, 512)):
        if m.round_size(size) != want:
            sys.exit(f"round_size({size}) with 4 divisions: {m.round_size(size)}, want {want}")


if __name__ == "__main__":
    defaults()
    max_split_20()
    rounding()
    print("oracle: worked replays agree")
