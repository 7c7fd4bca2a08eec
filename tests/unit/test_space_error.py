"""The learning benchmark's error over the whole candidate space (benchmarks/learning/space.py)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from benchmarks.learning.space import SpaceError, case_points, observing, space_scores

ATTRS = ("cpu", "mem")
X = np.array([[1.0, 10.0], [2.0, 10.0], [1.0, 20.0], [2.0, 20.0]])
T = np.array([100.0, 50.0, 80.0, 40.0])


class Scaled:
    """A model predicting T x factor everywhere but the first row, which it gets 3x."""

    def __init__(self, factor: float) -> None:
        self.factor = factor

    def predict_many(self, rows: np.ndarray) -> np.ndarray:
        out = np.array([T[np.flatnonzero((X == r).all(axis=1))[0]] for r in rows]) * self.factor
        out[(rows == X[0]).all(axis=1)] *= 3.0
        return out


def told(cpu: float, mem: float) -> SimpleNamespace:
    return SimpleNamespace(request=SimpleNamespace(assignment={"cpu": cpu, "mem": mem}))


def test_rows_already_run_leave_the_score() -> None:
    space = SpaceError(X, T, ATTRS)
    space.iteration(told(2.0, 20.0), None, Scaled(1.1))
    assert space.values[-1] == pytest.approx(100 * (2.3 + 0.1 + 0.1) / 3)  # 3 x 1.1 = 230% off
    space.iteration(told(1.0, 10.0), None, Scaled(1.1))  # the 3x row was run: out
    assert space.values[-1] == pytest.approx(10.0)
    space.iteration(told(1.0, 10.0), None, None)  # no model yet
    assert space.values[-1] is None and len(space.values) == 3


def test_the_delivered_model_is_scored_at_the_end() -> None:
    space = SpaceError(X, T, ATTRS)
    space.iteration(told(1.0, 10.0), None, Scaled(1.0))
    space.finished(SimpleNamespace(model=Scaled(0.8)))
    assert space.final == pytest.approx(20.0)


def test_case_points_average_the_repeats_and_keep_each() -> None:
    rows = [{"cpu": "1", "mem": "10", "T": "90"}, {"cpu": "1", "mem": "10", "T": "110"},
            {"cpu": "2", "mem": "10", "T": "50"}]
    Xc, Tc, repeats = case_points(rows, ATTRS)
    np.testing.assert_array_equal(Xc, [[1.0, 10.0], [2.0, 10.0]])
    np.testing.assert_array_equal(Tc, [100.0, 50.0])
    assert repeats == [[90.0, 110.0], [50.0]]


class Band:
    """Intervals T x (1 -/+ width) around the mean T, NaN bounds at the row mem 20, cpu 2."""

    def __init__(self, width: float) -> None:
        self.width = width

    def predict_interval(self, a: dict[str, float], level: float) -> SimpleNamespace:
        assert level == pytest.approx(0.90)
        t = T[np.flatnonzero((X == [a["cpu"], a["mem"]]).all(axis=1))[0]]
        if a == {"cpu": 2.0, "mem": 20.0}:
            return SimpleNamespace(lo=float("nan"), hi=float("nan"))
        return SimpleNamespace(lo=t * (1 - self.width), hi=t * (1 + self.width))


def test_interval_hits_count_every_repeat_of_the_rows_not_run() -> None:
    repeats = [[90.0, 110.0, 130.0], [50.0], [80.0, 84.0], [40.0]]
    space = SpaceError(X, T, ATTRS, repeats)
    space.iteration(told(2.0, 10.0), None, None)  # run: its repeat no longer counts
    # 15% band: 90 and 110 inside 85..115, 130 out; 80 and 84 inside; NaN row a miss
    assert space.interval_hits(Band(0.15)) == (4, 6)
    assert space.interval_hits(Band(0.5)) == (5, 6)
    assert SpaceError(X, T, ATTRS).interval_hits(Band(0.01)) == (3, 4)  # the means only


def test_scores_reach_and_keep_and_honesty_on_the_space() -> None:
    space = SpaceError(X, T, ATTRS)
    space.values, space.final = [40.0, 9.0, 12.0, 8.0], 8.0
    # run, acquisition_s, external MAPE (30 points), internal error
    rec = {"all_samples_s": 1000.0,
           "trace": [[1, 5.0, 30.0, None], [2, 10.0, 9.0, 6.0], [3, 15.0, 9.5, 5.0],
                     [4, 30.0, 9.0, 4.0]]}
    got = space_scores(space, rec)
    assert got["space_reach_run"] == 4  # 12% at run 3: kept only from run 4
    assert got["space_reached_within"] is False  # 30 s > 2% of 1000 s
    assert got["space_honesty"] == pytest.approx(2.0)
    assert space_scores(space, {**rec, "trace": rec["trace"][:2]}) == {}


def test_observing_adds_the_observer_and_restores_execute() -> None:
    import workbench.campaigns as campaigns

    before = campaigns.execute
    seen: list[object] = []

    def fake(*args: object, **kwargs: object) -> None:
        seen.extend(kwargs["observers"])  # type: ignore[call-overload]

    campaigns.execute = fake  # type: ignore[assignment]
    try:
        marker = SpaceError(X, T, ATTRS)
        with observing(marker):
            campaigns.execute(None, observers=["progress"])  # type: ignore[arg-type]
        assert seen == ["progress", marker]
        assert campaigns.execute is fake
    finally:
        campaigns.execute = before


def test_space_coverage_gives_no_figure_without_a_model() -> None:
    from benchmarks.learning.space import space_coverage

    assert space_coverage(SpaceError(X, T, ATTRS), None) == {}
