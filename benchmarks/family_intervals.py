"""Coverage of a family model's 90% interval on runs it never saw (`nimo model fit --family
auto`: the interval comes from the chosen family's out-of-fold errors).

    PYTHONPATH=. python benchmarks/family_intervals.py [--suites scout,bell,evaluation-small]
        [--seeds 1,2,3,4,5] [--train 0.7] [--apps N]

Per case and seed, the distinct configurations are split at random (seeded): ``--train`` of
them train (every recorded repeat), the rest are judged (every repeat). The family is chosen
among ``AUTO_CANDIDATES`` on the training runs alone, as ``nimo model fit --family auto``
does, and its 90% interval is scored on the judged runs, twice: ``widened`` with each judged
run's distance from the training runs (as ``nimo predict`` gives it) and ``constant`` (the
same interval without the widening). Printed per suite and way: the pooled share of judged
runs inside, in the half of each campaign's judged runs nearer the training runs and in the
farther half, the median per campaign, the median width ((hi - lo) / predicted), and the
campaigns without an interval (under 19 training runs). A judged configuration with a
category no training run had is not judged (no model can predict it).
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
from nimo.families.reach import distance, reach_doc


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
    trained = {a: {rows[i][a] for i in range(len(rows)) if keys[i] in chosen}
               for a in case.categorical}
    # a configuration with a category no training run had cannot be predicted: not judged
    judge = [i for i, k in enumerate(keys) if k not in chosen
             and all(rows[i][a] in trained[a] for a in case.categorical)]
    numeric = [a for a in case.attributes if a not in case.categorical]
    choice = choose_family(AUTO_CANDIDATES, [rows[i] for i in train], T[train],
                           numeric=numeric, categorical=case.categorical, load=case.load)
    predicted = choice.model.predict([rows[i] for i in judge])
    doc = choice.model.training.get("interval")
    # the near and far halves by the distance from the training runs, with or without widening
    far = distance(choice.model.encoder, reach_doc(choice.model.encoder, [rows[i] for i in train]),
                   [rows[i] for i in judge])
    out: dict[str, Any] = {"case": case.name, "seed": seed, "family": choice.family,
                           "train_runs": len(train), "judged": len(judge)}
    for how in ("constant", "widened"):
        bounds = [interval_of(doc, float(p), float(d) if how == "widened" else None)
                  for p, d in zip(predicted, far, strict=True)]
        scored = [(b, t, p, d) for b, t, p, d in zip(bounds, T[judge], predicted, far,
                                                     strict=True) if b is not None]
        inside = np.array([b[0] <= t <= b[1] for b, t, _, _ in scored], dtype=bool)
        dist = np.array([d for *_, d in scored])
        outer = dist > np.median(dist) if dist.size else dist.astype(bool)
        out[how] = {"inside": int(inside.sum()), "scored": int(inside.size),
                    "far_inside": int(inside[outer].sum()), "far": int(outer.sum()),
                    "width": (statistics.median([(b[1] - b[0]) / p for b, _, p, _ in scored])
                              if scored else None)}
    return out


def report(suite: str, records: Sequence[dict[str, Any]]) -> str:
    lines = []
    for how in ("constant", "widened"):
        r = [x[how] for x in records]
        scored = [x for x in r if x["scored"]]
        total = max(1, sum(x["scored"] for x in scored))
        pooled = sum(x["inside"] for x in scored) / total
        far = sum(x["far_inside"] for x in scored) / max(1, sum(x["far"] for x in scored))
        near = ((sum(x["inside"] for x in scored) - sum(x["far_inside"] for x in scored))
                / max(1, total - sum(x["far"] for x in scored)))
        per = [x["inside"] / x["scored"] for x in scored]
        widths = [x["width"] for x in scored if x["width"] is not None]
        lines.append(
            f"{suite:18s} {how:8s} campaigns {len(records):3d}  pooled {pooled:6.1%}  "
            f"near half {near:6.1%}  far half {far:6.1%}  median "
            f"{statistics.median(per) if per else float('nan'):6.1%}  width "
            f"{statistics.median(widths) if widths else float('nan'):.2f}  judged runs "
            f"{total}  without an interval {len(records) - len(scored)}")
    return "\n".join(lines)


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
            print(f"  {suite} {r['case']} s{r['seed']}: {r['family']}, widened "
                  f"{r['widened']['inside']} of {r['widened']['scored']} inside",
                  file=sys.stderr)
        print(report(suite, records))
    return 0


if __name__ == "__main__":
    sys.exit(main())
