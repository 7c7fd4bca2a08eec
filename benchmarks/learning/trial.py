"""A trial design against a baseline on the generated suites, campaign by campaign: the
columns of the adoption rules in benchmarks/learning/README.md (reach and keep, with the
campaigns gained and lost; median runs to reach; median final external MAPE; ext/int at stop
above 2; finals above 10% and 50%), read from ``evaluate --out`` files of the same suite and
seeds.

    python -m benchmarks.learning.trial BASE.json NEW.json [--base-design recommended]
                                        [--design NAME]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.learning.metrics import median_inf

Key = tuple[str, int]  # (case, seed)


@dataclass(frozen=True)
class Column:
    """One design's rule columns over a set of campaigns."""

    campaigns: int
    reach_keep: int
    runs_to_reach: float  # median; a campaign that never reached counts as infinite
    final_mape: float  # median
    above_2: int  # ext/int at stop above 2
    finals_above_10: int
    finals_above_50: int


def by_campaign(records: Sequence[Mapping[str, Any]], design: str | None) -> dict[Key, Any]:
    """The records of ``design`` (None: the only design in them) keyed by (case, seed)."""
    designs = sorted({str(r["design"]) for r in records})
    if design is None:
        if len(designs) != 1:
            raise ValueError(f"several designs ({', '.join(designs)}): name one")
        design = designs[0]
    if design not in designs:
        raise ValueError(f"no campaign of design {design!r} (there: {', '.join(designs)})")
    return {(str(r["case"]), int(r["seed"])): r for r in records if r["design"] == design}


def column(records: Mapping[Key, Mapping[str, Any]]) -> Column:
    rows = list(records.values())
    finals = [math.inf if r["final_mape"] is None else float(r["final_mape"]) for r in rows]
    honesty = [float(r["honesty"]) for r in rows if r.get("honesty") is not None]
    return Column(len(rows), sum(bool(r.get("reached_within")) for r in rows),
                  median_inf(r.get("reach_run") for r in rows), median_inf(finals),
                  sum(h > 2 for h in honesty), sum(f > 10 for f in finals),
                  sum(f > 50 for f in finals))


def gained_and_lost(base: Mapping[Key, Mapping[str, Any]],
                    new: Mapping[Key, Mapping[str, Any]]) -> tuple[list[Key], list[Key]]:
    """Campaigns (on both sides) that reach and keep only with the new design, only with
    the base."""
    both = sorted(base.keys() & new.keys())
    gained = [k for k in both if new[k].get("reached_within") and
              not base[k].get("reached_within")]
    lost = [k for k in both if base[k].get("reached_within") and
            not new[k].get("reached_within")]
    return gained, lost


def _row(name: str, c: Column) -> str:
    return (f"{name:<28} {c.reach_keep:>4} of {c.campaigns:<4} {c.runs_to_reach:>6g} "
            f"{c.final_mape:>7.2f} {c.above_2:>6} {c.finals_above_10:>9} "
            f"{c.finals_above_50:>9}")


def report(base: Mapping[Key, Any], new: Mapping[Key, Any], names: tuple[str, str]) -> str:
    shared = base.keys() & new.keys()
    base, new = ({k: v for k, v in d.items() if k in shared} for d in (base, new))
    gained, lost = gained_and_lost(base, new)
    lines = [f"{len(shared)} campaigns on both sides (same case and seed)",
             f"{'design':<28} {'reach & keep':>12} {'runs':>6} {'final':>7} {'> 2':>6} "
             f"{'final>10':>9} {'final>50':>9}",
             _row(names[0], column(base)), _row(names[1], column(new)),
             f"gained ({len(gained)}): " + (", ".join(f"{c} s{s}" for c, s in gained) or "-"),
             f"lost ({len(lost)}): " + (", ".join(f"{c} s{s}" for c, s in lost) or "-")]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("base", type=Path, help="the baseline's `evaluate --out` JSON file")
    ap.add_argument("new", type=Path, help="the trial's `evaluate --out` JSON file")
    ap.add_argument("--base-design", default="recommended")
    ap.add_argument("--design", default=None, help="the trial's design (default: the only one)")
    args = ap.parse_args(argv)
    try:
        base = by_campaign(json.loads(args.base.read_text())["records"], args.base_design)
        new = by_campaign(json.loads(args.new.read_text())["records"], args.design)
    except (OSError, ValueError, KeyError) as e:
        print(f"trial: {e}", file=sys.stderr)
        return 1
    if not base.keys() & new.keys():
        print(f"trial: no campaign on the same case and seed in {args.base} and {args.new}",
              file=sys.stderr)
        return 1
    names = (args.base_design, args.design or str(next(iter(new.values()))["design"]))
    print(report(base, new, names))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
