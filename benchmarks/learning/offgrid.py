"""How many judge rows of a suite lie off the levels their campaign's training CSV holds.

A judge assignment is removed from the CSV a campaign replays; where it held an attribute's
smallest or largest level alone, the model is asked about a value beyond every level it
knows (an extrapolation the far test must see). Prints, per suite and seeds, the judge rows
and how many lie below or above the training levels of some attribute:

    PYTHONPATH=. python -m benchmarks.learning.offgrid bell --seeds 1,2
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from benchmarks.learning.evaluate import _key, judge_assignments, read_case, sizes
from benchmarks.learning.suites import SUITES, Case, default_cache, load_suite


def off_levels(case: Case, seed: int) -> tuple[int, int, int]:
    """(judge rows, below some attribute's training levels, above them) of (case, seed)."""
    _, rows = read_case(case.csv, case.attributes)
    keys = [_key(r, case.attributes) for r in rows]
    judge = judge_assignments(case, seed, sizes(case, None, None)[0], keys)
    train = {k for k in keys if k not in judge}
    numeric = [i for i, a in enumerate(case.attributes) if a not in case.categorical]
    low = {i: min(k[i] for k in train) for i in numeric}
    high = {i: max(k[i] for k in train) for i in numeric}
    below = sum(any(k[i] < low[i] for i in numeric) for k in judge)
    above = sum(any(k[i] > high[i] for i in numeric) and not any(k[i] < low[i] for i in numeric)
                for k in judge)
    return len(judge), below, above


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("suite", choices=SUITES)
    ap.add_argument("--seeds", default="1,2")
    ap.add_argument("--size", type=int, default=60, help="generated suite size")
    args = ap.parse_args(argv)
    seeds = [int(s) for s in args.seeds.split(",")]
    totals = [0, 0, 0]
    for case in load_suite(args.suite, default_cache(), size=args.size):
        for seed in seeds:
            for j, n in enumerate(off_levels(case, seed)):
                totals[j] += n
    rows, below, above = totals
    print(f"{args.suite} seeds {args.seeds}: {rows} judge rows, {below + above} off the "
          f"training levels ({below} below, {above} above)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
