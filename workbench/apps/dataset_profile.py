#!/usr/bin/env python3
"""Profile a dataset directory: total bytes, element (file) count, average and largest element.

Prints one JSON line ``{"bytes": .., "elements": .., "avg_element_bytes": ..,
"max_element_bytes": ..}``; hidden files (the generator's marker) are not elements. Standard
library only: copied to and run on the storage host.
"""

from __future__ import annotations

import json
import os
import sys


def profile(root: str) -> dict[str, float]:
    sizes = [os.path.getsize(os.path.join(d, f))
             for d, _, files in os.walk(root) for f in files if not f.startswith(".")]
    total = sum(sizes)
    return {"bytes": total, "elements": len(sizes),
            "avg_element_bytes": total / len(sizes) if sizes else 0.0,
            "max_element_bytes": max(sizes, default=0)}


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or not os.path.isdir(args[0]):
        print(f"usage: dataset_profile.py DIR (got {args})", file=sys.stderr)
        return 2
    print(json.dumps(profile(args[0])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
