"""Coverage of a family model's 90% interval on runs it never saw (`nimo model fit --family
auto`: the interval comes from the chosen family's out-of-fold errors).

    PYTHONPATH=. python benchmarks/family_intervals.py [--suites scout,bell,evaluation-small]
        [--seeds 1,2,3,4,5] [--train 0.7] [--apps N]

Per case and seed, the distinct configurations are split at random (seeded): ``--train`` of
them train (every recorded repeat), the rest are judged (every repeat). The family is chosen
among ``AUTO_CANDIDATES`` on the training runs alone, as ``nimo model fit --family auto``
does, and its 90% interval is scored on the judged runs. Printed per suite: the pooled share
of judged runs inside, the median per campaign, the median width ((hi - lo) / predicted),
and the campaigns without an interval (under 19 training runs).
"""

from __future__ import annotations

import argparse
import csv
import statistics
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np

from benchmarks.learning.suites import Case, load_suite
from nimo.families import AUTO_CANDIDATES, choose_family
from nimo.families.interval import interval_of


def read_rows(case: Case) -> tuple[list[dict[str, Any]], np.ndarray]:
    with case.csv.open(newline="") as fh:
        data = list(csv.DictReader(fh))
    rows = [{a: (r[a] if a in case.categorical else float(r[a])) for a in case.attributes}
            for r in data]
    return rows, np.array([float(r["T"]) for r in data])


def campaign(case: Case, seed: int, train_share: float) -> dict[str, Any]:
    rows, T = read_rows(case)
    keys = [tuple(str(r[a]) for a in case.attributes) for r in rows]
    distinct = sorted(set(keys))
    rng = np.random.default_rng([seed, 71])
    chosen = {distinct[i] for i in rng.permutation(len(distinct))[
        :max(2, round(train_share * len(distinct)))]}
    train = [i for i, k in enumerate(keys) if k in chosen]
    judge = [i for i, k in enumerate(keys) if k not in chosen]
    numeric = [a for a in case.attributes if a not in case.categorical]
    choice = choose_family(AUTO_CANDIDATES, [rows[i] for i in train], T[train],
                           numeric=numeric, categorical=case.categorical, load=case.load)
    predicted = choice.model.predict([rows[i] for i in judge])
    doc = choice.model.training.get("interval")
    inside, widths = [], []
    for p, t in zip(predicted, T[judge], strict=True):
        bounds = interval_of(doc, float(p))
        if bounds is None:
            continue
        inside.append(bounds[0] <= t <= bounds[1])
        widths.append((bounds[1] - bounds[0]) / p)
    return {"case": case.name, "seed": seed, "family": choice.family,
            "train_runs": len(train), "judged": len(judge), "inside": int(sum(inside)),
            "scored": len(inside), "width": statistics.median(widths) if widths else None}


def report(suite: str, records: Sequence[dict[str, Any]]) -> str:
    scored = [r for r in records if r["scored"]]
    pooled = sum(r["inside"] for r in scored) / max(1, sum(r["scored"] for r in scored))
    per = [r["inside"] / r["scored"] for r in scored]
    widths = [r["width"] for r in scored if r["width"] is not None]
    return (f"{suite:18s} campaigns {len(records):3d}  pooled {pooled:6.1%}  median "
            f"{statistics.median(per) if per else float('nan'):6.1%}  width "
            f"{statistics.median(widths) if widths else float('nan'):.2f}  judged runs "
            f"{sum(r['scored'] for r in scored)}  without an interval "
            f"{len(records) - len(scored)}")


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--suites", default="scout,bell,evaluation-small")
    ap.add_argument("--seeds", default="1,2,3,4,5")
    ap.add_argument("--train", type=float, default=0.7)
    ap.add_argument("--apps", type=int, help="first N cases of each suite")
    args = ap.parse_args(argv)
    seeds = [int(s) for s in args.seeds.split(",")]
    for suite in args.suites.split(","):
        cases = load_suite(suite)[:args.apps]
        records = [campaign(c, s, args.train) for c in cases for s in seeds]
        for r in records:
            print(f"  {suite} {r['case']} s{r['seed']}: {r['family']}, {r['inside']} of "
                  f"{r['scored']} inside", file=sys.stderr)
        print(report(suite, records))
    return 0


if __name__ == "__main__":
    sys.exit(main())
