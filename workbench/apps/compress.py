#!/usr/bin/env python3
"""CPU-bound application: compress every file of a dataset (xz/LZMA or zlib, high level).

Reads the files (over the storage mount) in 1 MiB blocks, compresses them with one
compressor per file (``--codec lzma`` preset ``--level``, default 1, ~10 MB/s per core; or
``--codec zlib``), writes the compressed stream to WORKDIR (or discards it) and
prints a JSON summary. Standard library only.
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


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("dataset")
    p.add_argument("--codec", choices=("lzma", "zlib"), default="lzma")
    p.add_argument("--level", type=int, default=1)
    p.add_argument("--out", help="directory for the compressed files (default: discard)")
    a = p.parse_args(argv)
    t0 = time.monotonic()
    n_in = n_out = 0
    names = sorted(f for f in os.listdir(a.dataset) if not f.startswith("."))
    if not names:
        print(f"compress: no files in {a.dataset}", file=sys.stderr)
        return 2
    for name in names:
        comp = (lzma.LZMACompressor(preset=a.level) if a.codec == "lzma"
                else zlib.compressobj(a.level))
        with contextlib.ExitStack() as stack:
            out = stack.enter_context(open(os.path.join(a.out, name + ".z"), "wb")) \
                if a.out else None
            f = stack.enter_context(open(os.path.join(a.dataset, name), "rb"))
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
    print(json.dumps({"app": "compress", "files": len(names), "bytes_in": n_in,
                      "bytes_out": n_out, "seconds": round(time.monotonic() - t0, 3)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
