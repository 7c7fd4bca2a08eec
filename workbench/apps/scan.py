#!/usr/bin/env python3
"""Memory-sensitive application: an iterative analysis making several passes over a dataset.

All files are opened once and re-read ``--passes`` times (like an iterative solver or k-means
over its input), computing per-pass CRC32 and line counts. When the dataset fits in the memory
the process's cgroup allows, passes after the first are served from the page cache; below
that working set the pages are evicted and every pass fetches the data again over the storage
mount, so both the run time and the data flow jump. Standard library only.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time
import zlib


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("dataset")
    p.add_argument("--passes", type=int, default=4)
    p.add_argument("--block-kb", type=int, default=256)
    a = p.parse_args(argv)
    t0 = time.monotonic()
    names = sorted(f for f in os.listdir(a.dataset) if not f.startswith("."))
    if not names:
        print(f"scan: no files in {a.dataset}", file=sys.stderr)
        return 2
    block = a.block_kb * 1024
    per_pass = []
    with contextlib.ExitStack() as stack:
        files = [stack.enter_context(open(os.path.join(a.dataset, n), "rb", buffering=0))
                 for n in names]
        for _ in range(a.passes):
            t = time.monotonic()
            crc, lines, n = 0, 0, 0
            for f in files:
                f.seek(0)
                while chunk := f.read(block):
                    crc = zlib.crc32(chunk, crc)
                    lines += chunk.count(b"\n")
                    n += len(chunk)
            per_pass.append(round(time.monotonic() - t, 3))
    print(json.dumps({"app": "scan", "files": len(names), "bytes_per_pass": n, "lines": lines,
                      "crc32": crc, "pass_seconds": per_pass,
                      "seconds": round(time.monotonic() - t0, 3)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
