#!/usr/bin/env python3
"""CPU-bound application: compress every file of a dataset (xz/LZMA or zlib, high level).

Reads the files (over the storage mount) in 1 MiB blocks, compresses them with one
compressor per file (``--codec lzma`` preset ``--level``, default 1, ~10 MB/s per core; or
``--codec zlib``), writes the compressed stream to WORKDIR (or discards it) and
prints a JSON summary. ``--threads N`` compresses N files concurrently (both codecs release
the GIL while compressing; default 1). Standard library only.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import lzma
import os
import sys
import time
import zlib
from concurrent.futures import ThreadPoolExecutor


def compress_file(path: str, codec: str, level: int, out_path: str | None) -> tuple[int, int]:
    """(bytes read, bytes of compressed output) of one file."""
    comp = lzma.LZMACompressor(preset=level) if codec == "lzma" else zlib.compressobj(level)
    n_in = n_out = 0
    with contextlib.ExitStack() as stack:
        out = stack.enter_context(open(out_path, "wb")) if out_path else None
        f = stack.enter_context(open(path, "rb"))
        while block := f.read(1 << 20):
            n_in += len(block)
            z = comp.compress(block)
            n_out += len(z)
            if out:
                out.write(z)
        z = comp.flush()
        n_out += len(z)
        if out:
            out.write(z)
    return n_in, n_out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("dataset")
    p.add_argument("--codec", choices=("lzma", "zlib"), default="lzma")
    p.add_argument("--level", type=int, default=1)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--out", help="directory for the compressed files (default: discard)")
    a = p.parse_args(argv)
    t0 = time.monotonic()
    names = sorted(f for f in os.listdir(a.dataset) if not f.startswith("."))
    if not names:
        print(f"compress: no files in {a.dataset}", file=sys.stderr)
        return 2
    with ThreadPoolExecutor(max(1, a.threads)) as pool:
        sizes = list(pool.map(lambda name: compress_file(
            os.path.join(a.dataset, name), a.codec, a.level,
            os.path.join(a.out, name + ".z") if a.out else None), names))
    n_in, n_out = sum(i for i, _ in sizes), sum(o for _, o in sizes)
    print(json.dumps({"app": "compress", "files": len(names), "bytes_in": n_in,
                      "bytes_out": n_out, "seconds": round(time.monotonic() - t0, 3)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
