"""Two designs compared campaign by campaign (same case, same seed) at the configuration
marks of an ``evaluate --out`` file: the median difference of external MAPE and how many
campaigns are more than a point better or worse.

    python -m benchmarks.learning.paired OUT.json DESIGN_A DESIGN_B
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.learning.metrics import CONFIG_FRACTIONS

MARGIN = 1.0  # points


def paired_marks(records: Sequence[dict[str, Any]], a: str, b: str
                 ) -> dict[float, tuple[float, int, int, int]]:
    """Per mark: (median of A - B, campaigns where A is more than ``MARGIN`` points lower,
    ... higher, campaigns paired)."""
    by_key = {(r["design"], r["case"], r["seed"]): r for r in records if r.get("marks")}
    out: dict[float, tuple[float, int, int, int]] = {}
    for mark in CONFIG_FRACTIONS:
        diffs = [ra["marks"][str(mark)]["mape"] - rb["marks"][str(mark)]["mape"]
                 for (design, case, seed), ra in by_key.items() if design == a
                 and (rb := by_key.get((b, case, seed))) is not None]
        if diffs:
            out[mark] = (statistics.median(diffs), sum(d < -MARGIN for d in diffs),
                         sum(d > MARGIN for d in diffs), len(diffs))
    return out


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path, help="an `evaluate --out` JSON file")
    ap.add_argument("a")
    ap.add_argument("b")
    args = ap.parse_args(argv)
    marks = paired_marks(json.loads(args.out.read_text())["records"], args.a, args.b)
    if not marks:
        print(f"paired: no campaign of {args.a!r} and {args.b!r} on the same case and seed "
              f"with configuration marks in {args.out}", file=sys.stderr)
        return 1
    print(f"{args.a} - {args.b}: external MAPE points, paired by case and seed")
    for mark, (median, better, worse, n) in marks.items():
        print(f"  at {mark:.0%}: median {median:+.2f}; more than {MARGIN:g} point lower in "
              f"{better}, higher in {worse} of {n}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
