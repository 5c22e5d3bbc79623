"""The benchmark suite's rows (bench/suite.py): synthetic allocation
workloads built in BUILD/bin from bench/workloads/*.cpp, and real programs
nobody here wrote, each traced itself (not a shell around it, so heaptrack,
which follows no child, measures the same process).

Each row is a Workload whose argv(ctx) gives the command line, at full or
--quick scale; it raises Skip with the reason when its tool is missing.
"""
import os
import shutil
import subprocess
from dataclasses import dataclass
from typing import Callable

HERE = os.path.dirname(os.path.abspath(__file__))


class Skip(Exception):
    """The row cannot run on this machine; the message says why."""


@dataclass
class Context:
    build: str  # the build directory (BUILD/bin holds the workloads)
    work: str  # a scratch directory, removed at the end
    quick: bool


@dataclass
class Workload:
    name: str
    shape: str  # what it exercises, for the table's legend
    argv: Callable[[Context], list]


def built(program, full, quick):
    """A workload program of BUILD/bin with its full and --quick arguments."""
    def argv(ctx):
        path = os.path.join(ctx.build, "bin", program)
        if not os.access(path, os.X_OK):
            raise Skip(f"{path} not built (cmake --build BUILD --target {program})")
        return [path] + [str(a) for a in (quick if ctx.quick else full)]
    return argv


def python_script(ctx):
    if not os.access("/usr/bin/python3", os.X_OK):
        raise Skip("no /usr/bin/python3 (Debian's python3 package)")
    count = 5000 if ctx.quick else 100000
    return ["/usr/bin/python3", os.path.join(HERE, "workloads", "dict_json.py"), str(count)]


def sqlite_inserts(ctx):
    """sqlite3 reading a script of ROWS inserts into an indexed table of an
    in-memory database (its page cache is malloc'd)."""
    sqlite = shutil.which("sqlite3")
    if sqlite is None:
        raise Skip("sqlite3 not installed (scripts/install-deps)")
    rows = 5000 if ctx.quick else 100000
    script = os.path.join(ctx.work, f"insert-{rows}.sql")
    if not os.path.exists(script):
        with open(script, "w") as f:
            f.write("CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, score REAL);\n"
                    "CREATE INDEX t_name ON t(name);\nBEGIN;\n")
            for i in range(rows):
                f.write(f"INSERT INTO t VALUES({i}, 'name-{i * 7919 % rows}', {i * 0.5});\n")
            f.write("COMMIT;\nSELECT count(*), sum(score) FROM t;\n")
    return [sqlite, ":memory:", f".read {script}"]


def cc1plus_templates(ctx):
    """cc1plus itself (not the g++ driver) on bench/workloads/templates.cpp,
    preprocessed once here; --quick only parses it (-fsyntax-only)."""
    if shutil.which("g++") is None:
        raise Skip("g++ not installed")
    cc1plus = subprocess.run(["g++", "-print-prog-name=cc1plus"], capture_output=True,
                             text=True).stdout.strip()
    if not os.path.isabs(cc1plus) or not os.access(cc1plus, os.X_OK):
        raise Skip(f"g++ -print-prog-name=cc1plus gave {cc1plus!r}, not a program")
    ii = os.path.join(ctx.work, "templates.ii")
    if not os.path.exists(ii):
        subprocess.run(["g++", "-std=c++20", "-E", os.path.join(HERE, "workloads", "templates.cpp"),
                        "-o", ii], check=True)
    mode = ["-fsyntax-only"] if ctx.quick else ["-O0"]
    return [cc1plus, "-fpreprocessed", "-quiet", "-std=c++20"] + mode + [
        ii, "-o", os.path.join(ctx.work, "templates.s")]


def node_array(ctx):
    node = shutil.which("node") or shutil.which("nodejs")
    if node is None:
        raise Skip("node not installed (Debian's nodejs package, scripts/install-deps)")
    count = 20000 if ctx.quick else 300000
    return [node, os.path.join(HERE, "workloads", "big_array.js"), str(count)]


WORKLOADS = [
    Workload("tight-pairs", "16–64 B malloc/free pairs freed at once, 1 thread",
             built("tight_pairs", [5000000], [20000])),
    Workload("churn", "16 B–8 KiB, random-slot frees, depths 2–20, 2 threads (gui_churn)",
             built("gui_churn", [1000000], [10000])),
    Workload("fifo-new-delete", "C++ new/delete of 16–256 B, FIFO lifetimes, 8 threads",
             built("fifo_new_delete", [8, 250000], [2, 5000])),
    Workload("call-paths-fp", "2–30 frames: recursion entered from 8 callers, frame pointers",
             built("call_paths", [1000000], [10000])),
    Workload("call-paths-nofp", "the same, built without frame pointers",
             built("call_paths_nofp", [1000000], [10000])),
    Workload("aligned-table", "posix_memalign 16 B–4 KiB aligned, random-slot frees",
             built("aligned_table", [1000000], [10000])),
    Workload("realloc-growth", "buffers grown by realloc 100 times, then freed",
             built("realloc_growth", [10000, 100], [200, 50])),
    Workload("big-blocks", "64 KiB–4 MiB blocks: grow a live set of 64, then release",
             built("big_blocks", [2000, 64], [20, 64])),
    Workload("mmap-regions", "mmap/munmap of 4 KiB–1 MiB, FIFO of 64",
             built("mmap_regions", [100000], [2000])),
    Workload("cross-thread-64", "64 threads in a ring, every free on the next thread",
             built("cross_thread", [64, 10000], [64, 100])),
    Workload("distinct-stacks-1e5", "~10^5 distinct stacks of depth 27, 1 thread",
             built("distinct_stacks", [100000, 27, 500000], [4096, 27, 8192])),
    Workload("distinct-stacks-1e6", "~10^6 distinct stacks (2^20 paths) of depth 27",
             built("distinct_stacks", [1048576, 27, 2000000], [8192, 27, 16384])),
    Workload("python3", "/usr/bin/python3: dicts, lists, JSON round trips",
             python_script),
    Workload("sqlite3", "sqlite3 CLI: 10^5 INSERTs into an indexed in-memory table",
             sqlite_inserts),
    Workload("cc1plus", "cc1plus -O0 on a preprocessed template-heavy C++20 TU",
             cc1plus_templates),
    Workload("node", "node: an array of 3·10^5 objects, sorted and joined",
             node_array),
]
