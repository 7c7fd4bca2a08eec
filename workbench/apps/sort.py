#!/usr/bin/env python3
"""Memory-sensitive application: external merge sort of the 100-byte records of a dataset.

Like a database sizing its sort buffer from the memory it is given, the run buffer is a
fraction of the memory limit of the process's cgroup (v1 ``memory.limit_in_bytes`` or v2
``memory.max``; ``--memory-mb`` overrides). When the records fit, they are sorted in memory;
otherwise sorted runs are spilled to WORKDIR and k-way merged, so the run time jumps when the
limit falls below the working set. Output goes to WORKDIR/sorted.out. Standard library only.
"""

from __future__ import annotations

import argparse
import contextlib
import heapq
import json
import os
import sys
import time
from collections.abc import Iterator
from typing import BinaryIO

PER_RECORD_OVERHEAD = 60  # bytes of Python object overhead per record held in memory
BUFFER_FRACTION = 0.35
MERGE_BUFFER = 1 << 20  # read buffer per merged run; the fan-in is budget / this


def cgroup_memory_limit() -> int | None:
    """The memory limit (bytes) of this process's cgroup, or None when unlimited/unknown."""
    try:
        with open("/proc/self/cgroup") as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if "memory" in controllers.split(","):
            limit_file = f"/sys/fs/cgroup/memory{path}/memory.limit_in_bytes"
        elif controllers == "":
            limit_file = f"/sys/fs/cgroup{path}/memory.max"
        else:
            continue
        try:
            with open(limit_file) as fh:
                value = fh.read().strip()
        except OSError:
            continue
        if value != "max" and int(value) < (1 << 50):
            return int(value)
    return None


def read_records(paths: list[str]) -> Iterator[bytes]:
    """Every record (line) of the files, in order."""
    for p in paths:
        with open(p, "rb", buffering=1 << 20) as f:
            yield from f


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("dataset")
    p.add_argument("--workdir", default="/tmp")
    p.add_argument("--memory-mb", type=float, help="memory budget (default: cgroup limit)")
    a = p.parse_args(argv)
    t0 = time.monotonic()
    limit = int(a.memory_mb * 2**20) if a.memory_mb else cgroup_memory_limit()
    limit = limit or os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    budget = int(limit * BUFFER_FRACTION)
    names = sorted(f for f in os.listdir(a.dataset) if not f.startswith("."))
    if not names:
        print(f"sort: no files in {a.dataset}", file=sys.stderr)
        return 2
    os.makedirs(a.workdir, exist_ok=True)
    runs: list[str] = []
    passes = 0
    chunk: list[bytes] = []
    used = n = 0
    for rec in read_records([os.path.join(a.dataset, x) for x in names]):
        chunk.append(rec)
        used += len(rec) + PER_RECORD_OVERHEAD
        n += 1
        if used >= budget:
            runs.append(spill(chunk, a.workdir, len(runs)))
            chunk, used = [], 0
    n_runs = len(runs) + (1 if runs and chunk else 0)
    out_path = os.path.join(a.workdir, "sorted.out")
    with open(out_path, "wb", buffering=1 << 20) as out:
        if not runs:
            chunk.sort()
            out.writelines(chunk)
        else:
            if chunk:
                runs.append(spill(chunk, a.workdir, len(runs)))
            chunk = []
            fan_in = max(2, budget // MERGE_BUFFER)
            while len(runs) > fan_in:  # intermediate passes: fewer, longer runs
                runs, passes = merge_pass(runs, fan_in, a.workdir, passes), passes + 1
            merge(runs, out)
            passes += 1
    print(json.dumps({"app": "sort", "records": n, "spilled": n_runs, "merge_passes": passes,
                      "budget_mb": round(budget / 2**20, 1),
                      "seconds": round(time.monotonic() - t0, 3)}))
    return 0


def merge(runs: list[str], out: BinaryIO) -> None:
    """k-way merge of sorted run files into ``out``; the runs are deleted."""
    with contextlib.ExitStack() as stack:
        files = [stack.enter_context(open(r, "rb", buffering=MERGE_BUFFER)) for r in runs]
        out.writelines(heapq.merge(*files))
    for r in runs:
        os.unlink(r)


def merge_pass(runs: list[str], fan_in: int, workdir: str, level: int) -> list[str]:
    """Merge groups of ``fan_in`` runs into longer runs (one pass over all the data)."""
    merged = []
    for i in range(0, len(runs), fan_in):
        path = os.path.join(workdir, f"run-p{level}-{i:04d}.tmp")
        with open(path, "wb", buffering=MERGE_BUFFER) as out:
            merge(runs[i:i + fan_in], out)
        merged.append(path)
    return merged


def spill(chunk: list[bytes], workdir: str, i: int) -> str:
    """Sort ``chunk`` and write it as run file ``i``; returns its path."""
    chunk.sort()
    path = os.path.join(workdir, f"run-s{i:04d}.tmp")
    with open(path, "wb", buffering=1 << 20) as f:
        f.writelines(chunk)
    return path


if __name__ == "__main__":
    sys.exit(main())
