"""The committee's mean as a delivered model: a probe (issue 9; nothing here changes a
design).

``recommended`` runs as usual on each case and seed; after every run an observer scores, on
every assignment of the case not run yet (their mean T, as ``space.py``), the delivered model
and three averages over it and the committee's plausible members
(:meth:`nimo.planner.learner.Learner.committee`): their geometric mean, their median, and
the geometric mean of the delivered model and that geometric mean. ``score`` prints, per
predictor, the campaigns that reach 10% and keep it to their last run, the median run that
takes, the median MAPE after 6-20 runs, and in how many campaigns an average reaches 10%
earlier or later than the delivered model. Runs, not learning time: the budget of item 1 is
not applied, and the planner still sees only its own model::

    PYTHONPATH=. python -m benchmarks.learning.committee_probe run tuning --skip 780 --size 900 \\
        --out /tmp/c.json
    PYTHONPATH=. python -m benchmarks.learning.committee_probe score /tmp/c.json
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from benchmarks.learning.blend_probe import on_learner
from benchmarks.learning.metrics import reach_and_keep
from benchmarks.learning.probe_cli import observed_campaign, probe_main
from benchmarks.learning.space import SpaceError
from nimo.metrics import mape_pct

PREDICTORS = ("delivered", "committee geomean", "committee median", "delivered x geomean")
MARKS = (6, 8, 10, 12, 15, 20)
_LATEST: dict[str, Any] = {}


def _grab(learner: Any) -> None:
    _LATEST["learner"] = learner


class CommitteeScores(SpaceError):
    """``SpaceError`` that also scores the committee's averages after every run."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.rows: list[list[float] | None] = []

    def iteration(self, outcome: Any, record: Any, model: Any) -> None:
        super().iteration(outcome, record, model)
        learner = _LATEST.get("learner")
        rest = ~self.ran
        if learner is None or model is None or learner.n < 3 or not rest.any():
            self.rows.append(None)
            return
        self.rows.append(self._averages(learner, model, self.X[rest], self.T[rest]))

    @staticmethod
    def _averages(learner: Any, model: Any, X: np.ndarray, T: np.ndarray) -> list[float]:
        members = learner.committee(X, plausible_only=True)
        members = np.where(np.isfinite(members) & (members > 0), members, np.nan)
        geo = np.exp(np.nanmean(np.log(members), axis=0))
        delivered = model.predict_many(X)
        return [mape_pct(T, p) for p in (delivered, geo, np.nanmedian(members, axis=0),
                                         np.sqrt(delivered * geo))]


def probe(case_seed: tuple[Any, int]) -> dict[str, Any]:
    """One ``recommended`` campaign with the observer; its per-run MAPEs."""
    on_learner("_committee_probe", _grab)
    case, seed = case_seed
    scores, _ = observed_campaign(case, seed, CommitteeScores)
    return {"case": case.name, "seed": seed, "rows": scores.rows}


def reach_run(values: Sequence[float | None]) -> float:
    """The run from which every later MAPE (one per run, from run 1) is within the target
    (``metrics.reach_and_keep``; inf: never)."""
    hit = reach_and_keep([(run, 0.0, v) for run, v in enumerate(values, start=1)])
    return float(hit[0]) if hit is not None else float("inf")


def _median(values: Sequence[float]) -> float:
    return float(np.median(values)) if len(values) else float("nan")


def score(records: Sequence[dict[str, Any]]) -> list[str]:
    """The printed comparison (see the module's docstring)."""
    reach: dict[str, np.ndarray] = {}
    lines = [f"{len(records)} campaigns; MAPE over every assignment not run yet",
             f"{'predictor':22s} reach&keep  runs  " + "  ".join(f"@{k:<5d}" for k in MARKS)]
    for j, name in enumerate(PREDICTORS):
        series = [[r[j] if r else None for r in rec["rows"]] for rec in records]
        reach[name] = np.array([reach_run(s) for s in series])
        at = [_median([s[k - 1] for s in series if len(s) >= k and s[k - 1] is not None])
              for k in MARKS]
        lines.append(f"{name:22s} {int(np.isfinite(reach[name]).sum()):10d}  "
                     f"{np.median(reach[name]):4.0f}  " + "  ".join(f"{v:6.1f}" for v in at))
    base = reach[PREDICTORS[0]]
    for name in PREDICTORS[1:]:
        lines.append(f"{name}: reaches earlier than delivered in {int((reach[name] < base).sum())},"
                     f" later in {int((reach[name] > base).sum())}")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    return probe_main("committee_probe", probe, score, argv)


if __name__ == "__main__":
    raise SystemExit(main())
