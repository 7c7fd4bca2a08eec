#!/usr/bin/env python3
"""Generate a NIMO test dataset: FILES files totalling SIZE_MB in DIR (deterministic per seed).

Kinds: ``text`` (word text, compressible ~3x), ``random`` (incompressible bytes), ``records``
(100-byte lines ``KEY(10) SPACE PAYLOAD(88) NEWLINE`` for sorting). A marker file
``.nimo-dataset.json`` records what was generated; an existing matching dataset is kept.
Standard library only: this script is copied to and run on the storage host.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import string
import sys

MARKER = ".nimo-dataset.json"
WORDS = [
    "".join(random.Random(i).choices(string.ascii_lowercase, k=3 + i % 9)) for i in range(4096)
]


def text_block(rng: random.Random, n: int) -> bytes:
    out, size = [], 0
    while size < n:
        line = " ".join(rng.choices(WORDS, k=12)) + f" {rng.randrange(10**9)}\n"
        out.append(line)
        size += len(line)
    return "".join(out).encode()[:n]


def random_block(rng: random.Random, n: int) -> bytes:
    return rng.randbytes(n)


def records_block(rng: random.Random, n: int) -> bytes:
    alphabet = string.ascii_letters + string.digits
    count = max(1, n // 100)
    keys = ["".join(rng.choices(alphabet, k=10)) for _ in range(count)]
    pay = "".join(rng.choices(alphabet, k=88 + 4096))
    return "".join(f"{k} {pay[i % 4096:i % 4096 + 88]}\n" for i, k in enumerate(keys)).encode()


KINDS = {"text": text_block, "random": random_block, "records": records_block}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("dir")
    p.add_argument("--size-mb", type=float, required=True)
    p.add_argument("--files", type=int, default=8)
    p.add_argument("--kind", choices=sorted(KINDS), default="text")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--force", action="store_true")
    a = p.parse_args(argv)
    want = {"size_mb": a.size_mb, "files": a.files, "kind": a.kind, "seed": a.seed}
    marker = os.path.join(a.dir, MARKER)
    if not a.force and os.path.exists(marker):
        with open(marker) as f:
            if json.load(f) == want:
                print(f"dataset {a.dir} already present")
                return 0
    os.makedirs(a.dir, exist_ok=True)
    total = int(a.size_mb * 1024 * 1024)
    per_file = total // a.files
    block = 1 << 20
    for i in range(a.files):
        rng = random.Random(a.seed * 100003 + i)
        with open(os.path.join(a.dir, f"part-{i:04d}"), "wb") as f:
            left = per_file
            while left > 0:
                n = min(block, left)
                data = KINDS[a.kind](rng, n)
                f.write(data)
                left -= len(data)
    with open(marker, "w") as f:
        json.dump(want, f)
    print(f"generated {a.files} files, {total / 2**20:.1f} MB of {a.kind} in {a.dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
