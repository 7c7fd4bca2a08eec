"""A family model asked to extrapolate in a scale (`nimo model fit --extrapolate-on nodes`):
is its honest error and its 90% interval that of the runs beyond its training levels?

    PYTHONPATH=. python benchmarks/family_extrapolation.py [--suite bell] [--on nodes]
        [--cuts 20,24,28,32,36,40 | --cuts levels]

Per case and cut, the runs at ``--on`` <= cut train and every run above it is judged
(``--cuts levels``: every level of the case from its fourth to its last but one; a case
with fewer than five levels is left out). A judged run with a category no training run had
is not judged (no model can predict it). The
family is chosen among ``AUTO_CANDIDATES`` on the training runs alone twice: with the
default folds (leave-one-configuration-out or 5-fold) and with the rolling-origin folds of
``--extrapolate-on`` (each of the largest training levels predicted from the levels below).
Printed per way: the median honest error against the median MAPE on the judged runs, the
share of campaigns whose honest error is under half their judged MAPE, and the pooled share
of judged runs inside the 90% interval (campaigns without one, under 19 held-out runs, are
counted apart), also by how far beyond the cut the judged run's level lies.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np

from benchmarks.family_intervals import read_rows
from benchmarks.learning.suites import Case, load_suite
from nimo.families import AUTO_CANDIDATES, choose_family
from nimo.families.interval import family_bounds

WAYS = ("default folds", "extrapolate folds")
HORIZONS = ("1", "2", "3+")  # the judged run's level: the first, second, ... beyond the cut


def campaign(case: Case, on: str, cut: float) -> dict[str, Any]:
    rows, T = read_rows(case)
    train = [i for i, r in enumerate(rows) if float(r[on]) <= cut]
    trained = {a: {rows[i][a] for i in train} for a in case.categorical}
    judge = [i for i, r in enumerate(rows) if float(r[on]) > cut
             and all(r[a] in trained[a] for a in case.categorical)]
    beyond = sorted({float(rows[i][on]) for i in judge})
    numeric = [a for a in case.attributes if a not in case.categorical]
    out: dict[str, Any] = {"case": case.name, "cut": cut}
    for way in WAYS:
        choice = choose_family(AUTO_CANDIDATES, [rows[i] for i in train], T[train],
                               numeric=numeric, categorical=case.categorical, load=case.load,
                               extrapolate_on=on if way == WAYS[1] else None)
        judged = [rows[i] for i in judge]
        predicted = choice.model.predict(judged)
        bounds = family_bounds(choice.model, judged, predicted)
        horizon: dict[str, list[int]] = {h: [0, 0] for h in HORIZONS}
        for row, b, t in zip(judged, bounds, T[judge], strict=True):
            if b:
                tally = horizon[HORIZONS[min(beyond.index(float(row[on])), 2)]]
                tally[0] += int(b[0] <= t <= b[1])
                tally[1] += 1
        out[way] = {"family": choice.family, "honest": choice.errors[choice.family],
                    "mape": float(np.mean(np.abs(predicted - T[judge]) / T[judge]) * 100),
                    "inside": sum(h[0] for h in horizon.values()),
                    "scored": sum(h[1] for h in horizon.values()), "horizon": horizon}
    return out


def report(records: Sequence[dict[str, Any]]) -> list[str]:
    lines = []
    for way in WAYS:
        r = [x[way] for x in records]
        rated = [x for x in r if x["honest"] is not None]
        scored = [x for x in r if x["scored"]]
        held = sum(x["inside"] for x in scored) / max(1, sum(x["scored"] for x in scored))
        lines.append(
            f"{way:17s} campaigns {len(r):3d}  honest error median "
            f"{statistics.median(x['honest'] for x in rated):5.1f}%  judged MAPE median "
            f"{statistics.median(x['mape'] for x in r):5.1f}%  honest < judged / 2 in "
            f"{sum(x['honest'] < x['mape'] / 2 for x in rated)} of {len(rated)}  90% interval "
            f"held {held:6.1%} of {sum(x['scored'] for x in scored)} judged runs  without an "
            f"interval {len(r) - len(scored)}")
        lines.append(f"{'':17s} held at the 1st / 2nd / 3rd+ level beyond the cut: " + " / ".join(
            _share(sum(x["horizon"][h][0] for x in r), sum(x["horizon"][h][1] for x in r))
            for h in HORIZONS))
    return lines


def _share(inside: int, scored: int) -> str:
    return f"{inside / scored:.1%} of {scored}" if scored else "-"


def cuts(case: Case, on: str, spec: str) -> list[float]:
    """The cuts of ``case``: ``spec``'s numbers, or with ``levels`` every level of ``on`` from
    the fourth to the last but one."""
    if spec != "levels":
        return [float(c) for c in spec.split(",")]
    levels = sorted({float(r[on]) for r in read_rows(case)[0]})
    return levels[3:-1]


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--suite", default="bell")
    ap.add_argument("--on", default="nodes")
    ap.add_argument("--cuts", default="20,24,28,32,36,40")
    args = ap.parse_args(argv)
    cases = [c for c in load_suite(args.suite) if args.on in c.attributes]
    if not cases:
        print(f"family_extrapolation: no case of suite {args.suite} has attribute {args.on}",
              file=sys.stderr)
        return 2
    records = [campaign(c, args.on, cut) for c in cases for cut in cuts(c, args.on, args.cuts)]
    for r in records:
        print(f"  {r['case']} <= {r['cut']:g}: " + "; ".join(
            f"{w}: {r[w]['family']} honest {r[w]['honest'] or float('nan'):.1f}% judged "
            f"{r[w]['mape']:.1f}% held {r[w]['inside']}/{r[w]['scored']}" for w in WAYS),
            file=sys.stderr)
    print("\n".join(report(records)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
