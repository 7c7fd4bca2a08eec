"""The delivered model averaged with the models of the runs before it: a probe (issue 9;
nothing here changes a design).

About half of the campaigns that miss item 1 reach 10% within the budget and lose it a run
or a few later, when the model changes. Averaging each run's delivered model with the ones
the campaign delivered after the previous one or two runs (the geometric mean of their
predictions) would damp such swings, at the price of following a real gain a run later.
``recommended`` runs as usual; after every run an observer scores, on every assignment of
the case not run yet (their mean T, as ``space.py``), the delivered model and those two
averages, with the learning time spent so far. ``score`` prints per predictor the
campaigns that reach and keep 10% within 2% of the all-samples time (item 1's mark, on the
whole space instead of the 30 external assignments), the median run that takes, and the
campaigns an average gains and loses against the delivered model. The planner still sees
only its own model::

    PYTHONPATH=. python -m benchmarks.learning.history_probe run tuning --skip 840 \\
        --size 1000 --seeds 9 --out /tmp/h.json
    PYTHONPATH=. python -m benchmarks.learning.history_probe score /tmp/h.json
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from benchmarks.learning.metrics import BUDGET_FRACTION, reach_and_keep, reached_within
from benchmarks.learning.probe_cli import observed_campaign, probe_main
from benchmarks.learning.space import SpaceError
from nimo.metrics import mape_pct

WINDOWS = (1, 2, 3)  # the delivered model alone, and averaged over the last 2 and 3 runs'
PREDICTORS = ("delivered", "last 2 runs' models", "last 3 runs' models")


@np.errstate(all="ignore")
def geometric_window(predictions: Sequence[np.ndarray], k: int) -> np.ndarray:
    """The geometric mean of the last ``k`` prediction rows, skipping values that are not
    finite and positive (NaN where none is)."""
    rows = np.asarray(predictions[-k:], float)
    ok = np.isfinite(rows) & (rows > 0)
    count = ok.sum(axis=0)
    total = np.log(np.where(ok, rows, 1.0)).sum(axis=0)  # a skipped value adds log 1 = 0
    return np.where(count > 0, np.exp(total / np.maximum(count, 1)), np.nan)


class HistoryScores(SpaceError):
    """``SpaceError`` that also keeps each run's predictions over every row and scores their
    averages; ``rows``: per run [learning time so far, MAPE per ``WINDOWS``] (None: no
    model, or nothing left unrun)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.history: list[np.ndarray] = []
        self.rows: list[list[float | None]] = []

    def iteration(self, outcome: Any, record: Any, model: Any) -> None:
        super().iteration(outcome, record, model)
        spent = float(record.acquisition_s)
        rest = ~self.ran
        if model is None:
            self.history.clear()
        else:
            self.history.append(np.asarray(model.predict_many(self.X), float))
        if model is None or not rest.any():
            self.rows.append([spent] + [None] * len(WINDOWS))
            return
        row: list[float | None] = [spent]
        row += [mape_pct(self.T[rest], geometric_window(self.history, k)[rest]) for k in WINDOWS]
        self.rows.append(row)


def probe(case_seed: tuple[Any, int]) -> dict[str, Any]:
    """One ``recommended`` campaign with the observer: its per-run rows and the all-samples
    time the campaign was given (the CLI's ``final.all_samples_s``)."""
    case, seed = case_seed
    scores, doc = observed_campaign(case, seed, HistoryScores)
    return {"case": case.name, "seed": seed,
            "all_samples_s": float(doc["final"]["all_samples_s"]), "rows": scores.rows}


def hits(record: dict[str, Any], column: int) -> tuple[bool, float]:
    """(reached and kept 10% within the budget, the run it took; inf: never) for one
    predictor's column of a record's rows."""
    points = [(run, row[0], row[column]) for run, row in enumerate(record["rows"], start=1)]
    hit = reach_and_keep(points)
    within = reached_within(hit, record["all_samples_s"], BUDGET_FRACTION)
    return within, float(hit[0]) if hit is not None else float("inf")


def score(records: Sequence[dict[str, Any]]) -> list[str]:
    """The printed comparison (see the module's docstring)."""
    lines = [f"{len(records)} campaigns; MAPE over every assignment not run yet",
             f"{'predictor':22s} reach&keep in {100 * BUDGET_FRACTION:g}%  runs (median)"]
    base: np.ndarray | None = None
    for column, name in enumerate(PREDICTORS, start=1):
        results = [hits(r, column) for r in records]
        ok = np.array([w for w, _ in results], dtype=bool)
        line = (f"{name:22s} {int(ok.sum()):16d}  "
                f"{np.median([n for _, n in results]) if results else float('nan'):5.1f}")
        if base is None:
            base = ok
        else:
            line += f"  gained {int((ok & ~base).sum())}, lost {int((base & ~ok).sum())}"
        lines.append(line)
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    return probe_main("history_probe", probe, score, argv)


if __name__ == "__main__":
    raise SystemExit(main())
