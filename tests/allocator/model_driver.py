#!/usr/bin/env python3
"""Runs a memtrail replay script through a model of PyTorch's caching
allocator and prints, at each `stats` line, one JSON object with the model's
counters under memory_stats() names.

usage: model_driver.py MODEL_PY SCRIPT [CONF]
MODEL_PY is the project's oracle (oracle/caching_model.py, class
CachingModel) or any other model with the same interface; a model with the
older `CCA` interface (malloc/free/empty_cache and an `st` dict) also works,
so an outside reference can be checked against the same scripts.
CONF understands max_split_size_mb and roundup_power2_divisions (both forms,
with c10's interval rules); the model has no other knobs.
"""
import importlib.util
import json
import sys


def load_model(path):
    spec = importlib.util.spec_from_file_location("caching_allocator_model", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class CcaAdapter:
    """The CCA interface (counters in `st`) seen as CachingModel's."""

    def __init__(self, module, max_split, divisions):
        self.cca = module.CCA(max_split=max_split, div=divisions)
        self.malloc, self.free = self.cca.malloc, self.cca.free
        self.empty_cache = self.cca.empty_cache

    def memory_stats(self):
        st = self.cca.st
        return {
            "allocated_bytes.all.current": st["allocated"],
            "reserved_bytes.all.current": st["reserved"],
            "requested_bytes.all.current": st["requested"],
            "segment.all.current": st["segments"],
            "inactive_split.all.current": st["inactive_split"],
            "inactive_split_bytes.all.current": st["inactive_split_bytes"],
        }


def make_model(module, max_split, divisions):
    if hasattr(module, "CachingModel"):
        return module.CachingModel(max_split_size=max_split, divisions=divisions)
    if hasattr(module, "CCA"):
        return CcaAdapter(module, max_split, divisions)
    raise SystemExit(f"model_driver: {module.__file__} defines neither CachingModel nor CCA")


def parse_divisions(value):
    """c10 AllocatorConfig: 16 intervals [2^(20+i), 2^(21+i)); key K (MB)
    sets interval log2(K); the first key also fills the ones below it; '>'
    fills from the last listed index inclusive."""
    table = [0] * 16
    value = value.strip()
    if not value.startswith("["):
        return [int(value)] * 16
    first, last = True, 0
    for item in value.strip("[]").split(","):
        key, div = item.split(":")
        div = int(div)
        if key == ">":
            for i in range(last, 16):
                table[i] = div
            continue
        index = min(int(key).bit_length() - 1, 15)
        if first:
            for i in range(index):
                table[i] = div
            first = False
        table[index] = div
        last = index
    return table


def parse_conf(conf):
    max_split, table = float("inf"), [0] * 16
    # split at top-level commas only (the bracket form contains commas)
    items, depth, cur = [], 0, ""
    for ch in conf:
        depth += ch == "["
        depth -= ch == "]"
        if ch == "," and depth == 0:
            items.append(cur)
            cur = ""
        else:
            cur += ch
    if cur:
        items.append(cur)
    for item in items:
        key, value = item.split(":", 1)
        key = key.strip()
        if key == "max_split_size_mb":
            max_split = int(value) << 20
        elif key == "roundup_power2_divisions":
            table = parse_divisions(value)
        else:
            raise SystemExit(f"model_driver: the model has no knob {key!r}")

    def divisions(size):
        index = max(0, size.bit_length() - 1 - 20)
        return table[min(index, 15)]

    return max_split, divisions


def main():
    module = load_model(sys.argv[1])
    max_split, divisions = parse_conf(sys.argv[3] if len(sys.argv) > 3 else "")
    model = make_model(module, max_split, divisions)
    blocks = {}
    with open(sys.argv[2]) as script:
        for line in script:
            words = line.split("#")[0].split()
            if not words:
                continue
            if len(words) >= 4 and words[1] == "=" and words[2] == "malloc":
                blocks[words[0]] = model.malloc(int(words[3]))
            elif words[0] == "free":
                model.free(blocks.pop(words[1]))
            elif words[0] == "empty_cache":
                model.empty_cache()
            elif words[0] == "stats":
                print(json.dumps(model.memory_stats()))
            else:
                raise SystemExit(f"model_driver: unsupported line {line!r}")


if __name__ == "__main__":
    main()
