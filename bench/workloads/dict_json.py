"""dict_json: a plain CPython workload for the benchmark suite
(bench/suite.sh): builds COUNT records as dicts, lists and strings, encodes
them to JSON and back, and keeps a rolling window of them alive. Each
record holds one string past pymalloc's 512 B, so malloc sees it.

  /usr/bin/python3 dict_json.py COUNT
"""
import json
import sys


def record(i):
    return {"id": i, "name": f"item-{i}", "tags": [f"t{i % 7}", f"u{i % 13}"],
            "weights": [i * 0.5, i * 0.25, float(i % 101)], "nested": {"k": str(i) * (i % 5 + 1)},
            "text": "x" * (520 + i % 300)}  # past pymalloc's 512 B: malloc's


def main(count):
    window = []
    checksum = 0
    for start in range(0, count, 1000):
        batch = [record(i) for i in range(start, min(start + 1000, count))]
        text = json.dumps(batch)
        back = json.loads(text)
        checksum = (checksum * 31 + len(text) + len(back)) % (1 << 61)
        window.append(back)
        if len(window) > 16:
            window.pop(0)
    print(f"dict_json: checksum {checksum:016x}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 100000)
