"""How sure the benchmark's figures are: a 90% bootstrap interval for each acceptance figure
of an ``evaluate --out`` file, resampling applications (every seed and design of a drawn
application goes along, so the designs stay paired), and the same interval for the
difference between two designs.

A figure's interval says how much it would move on another draw of applications like these:
a gap to a target that lies inside it is not yet evidence either way.

    python -m benchmarks.learning.uncertainty OUT.json [--against random-same] [--draws 1000]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.learning.metrics import CONFIG_FRACTIONS, GBR, LEVEL
from benchmarks.learning.report import summarize
from benchmarks.learning.suites import GENERATED

Records = Sequence[dict[str, Any]]
Figure = Callable[[dict[str, Any]], float | None]
DRAWS = 1000

# (label, how to read it from one design's summary, scale for printing)
GENERATED_FIGURES: tuple[tuple[str, Figure, float], ...] = (
    ("reach & keep 10% (%)", lambda s: s.get("reached_within_share"), 100.0),
    ("runs to reach (x random)", lambda s: s.get("reach_runs_ratio"), 1.0),
    ("final MAPE (%)", lambda s: s.get("final_mape_median"), 1.0),
    ("ext/int median", lambda s: s.get("honesty_median"), 1.0),
    ("ext/int > 2 (%)", lambda s: s.get("honesty_over_2"), 100.0),
    ("90% coverage (%)", lambda s: s.get("coverage_pooled"), 100.0),
)


def _mark(f: float) -> Figure:
    return lambda s: (s.get("marks") or {}).get(f, {}).get("mape_median")


REAL_FIGURES: tuple[tuple[str, Figure, float], ...] = (
    *((f"MAPE at {f:.0%} of configs (%)", _mark(f), 1.0) for f in CONFIG_FRACTIONS),
    ("ext/int median", lambda s: s.get("honesty_median"), 1.0),
    ("ext/int > 2 (%)", lambda s: s.get("honesty_over_2"), 100.0),
    ("90% coverage (%)", lambda s: s.get("coverage_pooled"), 100.0),
)


def by_case(records: Records) -> dict[str, list[dict[str, Any]]]:
    """The records of each application (case), cases in sorted order."""
    out: dict[str, list[dict[str, Any]]] = {}
    for r in sorted(records, key=lambda r: r["case"]):
        out.setdefault(r["case"], []).append(r)
    return out


def resample(groups: dict[str, list[dict[str, Any]]], rng: np.random.Generator
             ) -> list[dict[str, Any]]:
    """The records (grouped by :func:`by_case`) of a draw of as many applications, with
    replacement; a drawn application's copies get distinct names so that pairing by
    (case, seed) still holds."""
    cases = list(groups)
    drawn = rng.choice(len(cases), size=len(cases), replace=True)
    return [{**r, "case": f"{cases[i]}#{k}"} for k, i in enumerate(drawn)
            for r in groups[cases[i]]]


def _value(figure: Figure, summary: dict[str, Any], design: str) -> float:
    s = summary.get(design)
    v = figure(s) if s is not None else None
    return math.nan if v is None else float(v)


def interval(values: Sequence[float], level: float = LEVEL) -> tuple[float, float]:
    """The central ``level`` percentile interval of the finite values (NaN when none)."""
    v = np.asarray([x for x in values if math.isfinite(x)], float)
    if v.size == 0:
        return math.nan, math.nan
    tail = (1.0 - level) / 2.0 * 100.0
    lo, hi = np.percentile(v, [tail, 100.0 - tail])
    return float(lo), float(hi)


def bootstrap(records: Records, generated: bool, against: str | None,
              draws: int = DRAWS, seed: int = 0) -> dict[str, dict[str, Any]]:
    """design -> label -> {"value", "interval", and with ``against``: "difference",
    "difference_interval"} for every figure of the suite."""
    figures = GENERATED_FIGURES if generated else REAL_FIGURES
    base = summarize(records, generated)
    designs = [d for d in base if d != GBR]
    rng, groups = np.random.default_rng(seed), by_case(records)
    samples = [summarize(resample(groups, rng), generated) for _ in range(draws)]
    out: dict[str, dict[str, Any]] = {}
    for design in designs:
        rows: dict[str, Any] = {}
        for label, figure, _ in figures:
            row: dict[str, Any] = {"value": _value(figure, base, design), "interval": interval(
                [_value(figure, s, design) for s in samples])}
            if against and against != design and against in base:
                row["difference"] = row["value"] - _value(figure, base, against)
                row["difference_interval"] = interval(
                    [_value(figure, s, design) - _value(figure, s, against) for s in samples])
            rows[label] = row
        out[design] = rows
    return out


def report(result: dict[str, dict[str, Any]], generated: bool, against: str | None,
           pr: Callable[[str], None] = print) -> None:
    scale = {label: k for label, _, k in (GENERATED_FIGURES if generated else REAL_FIGURES)}
    for design, rows in result.items():
        pr(f"\n{design}")
        for label, row in rows.items():
            k = scale[label]
            lo, hi = row["interval"]
            if not math.isfinite(row["value"]):
                continue
            line = (f"  {label:<30}{row['value'] * k:8.2f}   {LEVEL:.0%} interval "
                    f"{lo * k:7.2f} .. {hi * k:<7.2f}")
            if "difference" in row and math.isfinite(row["difference"]):
                dlo, dhi = row["difference_interval"]
                line += (f"  minus {against}: {row['difference'] * k:+.2f} "
                         f"({dlo * k:+.2f} .. {dhi * k:+.2f})")
            pr(line)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path, help="an `evaluate --out` JSON file")
    ap.add_argument("--against", help="a design of the file to difference every figure with")
    ap.add_argument("--draws", type=int, default=DRAWS, help=f"resamples (default {DRAWS})")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    try:
        doc = json.loads(args.out.read_text())
        records, suite = doc["records"], doc["suite"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"uncertainty: {args.out}: not an `evaluate --out` file ({e})", file=sys.stderr)
        return 2
    designs = {r["design"] for r in records}
    if args.against and args.against not in designs:
        print(f"uncertainty: --against {args.against!r} is not a design of {args.out} "
              f"(designs: {', '.join(sorted(designs))})", file=sys.stderr)
        return 2
    if args.draws < 10:
        print("uncertainty: --draws must be at least 10", file=sys.stderr)
        return 2
    generated = suite in GENERATED
    print(f"{suite}: {len({r['case'] for r in records})} applications, {len(records)} "
          f"campaigns, {args.draws} bootstrap draws over applications")
    report(bootstrap(records, generated, args.against, args.draws, args.seed), generated,
           args.against)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
