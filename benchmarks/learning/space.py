"""The error over the whole candidate space (issue 9, items 1 and 3).

The replay scores each model on its external test set: 30 random assignments on the
generated applications. A mean of 30 heavy-tailed percentage errors is a noisy estimate of
the error over the space, and a right-skewed one: its median lies below the space's mean,
so a ratio or a threshold judged on it reads the model better than it is more often than
worse. Here every model a campaign holds is also scored on every assignment of the case it
has not run (the mean T of each assignment's repeats), its judge set included. The planner
never sees these figures: an observer reads each iteration's model after the planner was
told the run. The delivered model's 90% interval is also judged there: on every repeat of
up to ``COVERAGE_ROWS`` of those assignments (a seeded choice), not only on the judge set's
runs (20 assignments on the generated applications, 2 on Bell).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from benchmarks.learning.metrics import (
    COVERAGE_ROWS,
    LEVEL,
    TARGET_PCT,
    honesty_ratio,
    interval_hits,
    reach_and_keep,
    reached_within,
)
from nimo.campaign import Observer
from nimo.metrics import mape_pct


class SpaceError(Observer):
    """MAPE of each iteration's model (``values``) and of the delivered one (``final``) over
    the rows of ``X`` (attribute order of the campaign) whose assignment was not run yet;
    ``repeats``: each row's measured T (default: its mean T, one run)."""

    def __init__(self, X: np.ndarray, T: np.ndarray, attributes: Sequence[str],
                 repeats: Sequence[Sequence[float]] | None = None) -> None:
        self.X, self.T, self.attributes = X, T, tuple(attributes)
        self.repeats = ([np.asarray(r, float) for r in repeats] if repeats is not None
                        else [np.array([t], float) for t in T])
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

    def interval_hits(self, model: Any) -> tuple[int, int]:
        """(inside, runs): every repeat of up to ``COVERAGE_ROWS`` rows not run (a seeded
        choice) against ``model``'s 90% interval (NaN bounds count as a miss)."""
        rest = np.flatnonzero(~self.ran)
        if rest.size > COVERAGE_ROWS:
            rest = np.sort(np.random.default_rng(0).choice(rest, COVERAGE_ROWS, replace=False))
        intervals: list[tuple[float, float]] = []
        measured: list[float] = []
        for i in rest:
            p = model.predict_interval(dict(zip(self.attributes, self.X[i].tolist(),
                                                strict=True)), LEVEL)
            intervals += [(p.lo, p.hi)] * len(self.repeats[i])
            measured += self.repeats[i].tolist()
        inside, total, _ = interval_hits(intervals, measured)
        return inside, total


Points = tuple[np.ndarray, np.ndarray, list[list[float]]]  # assignments, mean T, each T


def case_points(rows: Sequence[dict[str, str]], attributes: Sequence[str]) -> Points:
    """(distinct assignments, the mean T of each, the T of each repeat) of rows with numeric
    (coded) values."""
    by: dict[tuple[float, ...], list[float]] = {}
    for row in rows:
        by.setdefault(tuple(float(row[a]) for a in attributes), []).append(float(row["T"]))
    X = np.array(list(by), dtype=float).reshape(len(by), len(attributes))
    return X, np.array([np.mean(v) for v in by.values()], dtype=float), list(by.values())


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
                ) -> Points:
    """(assignments, mean T, each repeat's T) of the training data as replay loaded it
    (``ds``) and of the judge rows (coded as replay codes them)."""
    X, T, repeats = case_points(judge_rows, attributes)
    if not ds.assignments:
        return X, T, repeats
    return (np.vstack([np.array(ds.assignments, dtype=float), X]),
            np.concatenate([[ds.mean_T(a) for a in ds.assignments], T]),
            [[s.T for s in ds.runs[a]] for a in ds.assignments] + repeats)


def space_coverage(space: SpaceError, model_doc: Any) -> dict[str, Any]:
    """The delivered model's (its exported JSON, as the judge set reads it) 90% interval
    on the space: ``space_inside`` of ``space_runs`` repeats."""
    from nimo.model import CostModel

    try:
        model = CostModel.from_dict(model_doc)
    except Exception:  # noqa: BLE001 - no model, no figure (judge_scores says why)
        return {}
    inside, runs = space.interval_hits(model)
    return {"space_inside": inside, "space_runs": runs}


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
