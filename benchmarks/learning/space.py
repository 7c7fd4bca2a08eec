"""The error over the whole candidate space (issue 9, items 1 and 3).

The replay scores each model on its external test set: 30 random assignments on the
generated applications. A mean of 30 heavy-tailed percentage errors is a noisy estimate of
the error over the space, and a right-skewed one: its median lies below the space's mean,
so a ratio or a threshold judged on it reads the model better than it is more often than
worse. Here every model a campaign holds is also scored on every assignment of the case it
has not run (the mean T of each assignment's repeats), its judge set included. The planner
never sees these figures: an observer reads each iteration's model after the planner was
told the run.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from benchmarks.learning.metrics import TARGET_PCT, honesty_ratio, reach_and_keep, reached_within
from nimo.campaign import Observer
from nimo.metrics import mape_pct


class SpaceError(Observer):
    """MAPE of each iteration's model (``values``) and of the delivered one (``final``) over
    the rows of ``X`` (attribute order of the campaign) whose assignment was not run yet."""

    def __init__(self, X: np.ndarray, T: np.ndarray, attributes: Sequence[str]) -> None:
        self.X, self.T, self.attributes = X, T, tuple(attributes)
        self.ran = np.zeros(len(T), dtype=bool)
        self.index = {tuple(row): i for i, row in enumerate(X.tolist())}
        self.values: list[float | None] = []
        self.final: float | None = None

    def iteration(self, outcome: Any, record: Any, model: Any) -> None:
        key = tuple(float(outcome.request.assignment[a]) for a in self.attributes)
        if key in self.index:
            self.ran[self.index[key]] = True
        self.values.append(self.score(model))

    def finished(self, result: Any) -> None:
        self.final = self.score(result.model)

    def score(self, model: Any) -> float | None:
        if model is None or self.ran.all():
            return None
        rest = ~self.ran
        return mape_pct(self.T[rest], model.predict_many(self.X[rest]))


def case_points(rows: Sequence[dict[str, str]], attributes: Sequence[str]
                ) -> tuple[np.ndarray, np.ndarray]:
    """(distinct assignments, the mean T of each) of rows with numeric (coded) values."""
    by: dict[tuple[float, ...], list[float]] = {}
    for row in rows:
        by.setdefault(tuple(float(row[a]) for a in attributes), []).append(float(row["T"]))
    X = np.array(list(by), dtype=float).reshape(len(by), len(attributes))
    return X, np.array([np.mean(v) for v in by.values()], dtype=float)


@contextlib.contextmanager
def observing(observer: Observer) -> Iterator[None]:
    """Campaigns started through the CLI in this process also report to ``observer``."""
    import workbench.campaigns as campaigns

    execute = campaigns.execute

    def with_observer(*args: Any, **kwargs: Any) -> Any:
        kwargs["observers"] = [*kwargs.get("observers", ()), observer]
        return execute(*args, **kwargs)

    campaigns.execute = with_observer
    try:
        yield
    finally:
        campaigns.execute = execute


def whole_space(ds: Any, judge_rows: Sequence[dict[str, str]], attributes: Sequence[str]
                ) -> tuple[np.ndarray, np.ndarray]:
    """(assignments, mean T) of the training data as replay loaded it (``ds``) and of the
    judge rows (coded as replay codes them)."""
    X, T = case_points(judge_rows, attributes)
    if not ds.assignments:
        return X, T
    return (np.vstack([np.array(ds.assignments, dtype=float), X]),
            np.concatenate([[ds.mean_T(a) for a in ds.assignments], T]))


def space_scores(space: SpaceError, rec: dict[str, Any]) -> dict[str, Any]:
    """The campaign record's reach & keep, final error and honesty judged on the whole
    space (``space_*``), beside the ones judged on the external test set."""
    trace = rec.get("trace") or []
    if len(trace) != len(space.values):
        return {}
    points = [(t[0], t[1], v) for t, v in zip(trace, space.values, strict=True)]
    hit = reach_and_keep(points, TARGET_PCT, space.final)
    return {"space_final": space.final, "space_reach_run": hit[0] if hit else None,
            "space_reached_within": reached_within(hit, rec["all_samples_s"]),
            "space_honesty": honesty_ratio([t[3] for t in trace], space.final),
            "space_trace": [None if v is None else round(v, 3) for v in space.values]}
