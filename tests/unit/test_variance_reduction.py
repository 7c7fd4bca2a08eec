"""Integrated variance reduction against the posterior variance computed directly."""

from __future__ import annotations

import numpy as np

from nimo.model.gp import GPHyper, LogTProcess
from nimo.planner.strategies.support_sampling import SupportPointsAndEdges, SupportThenVariance
from nimo.planner.strategies.variance import over_rows, seeded_subset, variance_reduction
from nimo.space import Attribute, ResourceSpace

LEVELS = [[1.0, 2.0, 4.0, 8.0, 16.0], [0.1, 0.5, 1.0]]
HYPER = GPHyper((0.4, 0.7), signal=0.8, noise=0.01)


def _grid() -> np.ndarray:
    return np.array([[a, b] for a in LEVELS[0] for b in LEVELS[1]], float)


def _over(rows: np.ndarray) -> LogTProcess:
    return LogTProcess(LEVELS, rows, np.zeros(len(rows)), HYPER)


def _summed_variance(rows: np.ndarray, targets: np.ndarray) -> float:
    return float(_over(rows).predict_log(targets)[1].sum())


def test_reduction_equals_the_drop_in_summed_posterior_variance():
    grid = _grid()
    rows, pool = grid[[0, 7, 14]], grid[[1, 5, 9, 12]]
    gain = variance_reduction(_over(rows), pool, grid)
    before = _summed_variance(rows, grid)
    for x, g in zip(pool, gain, strict=True):
        after = _summed_variance(np.vstack([rows, x]), grid)
        assert abs(g - (before - after)) < 1e-9 * before


def test_a_run_far_from_the_measured_ones_cuts_more_than_one_beside_them():
    grid = _grid()
    rows = grid[[0, 1]]  # the smallest first level
    near, far = grid[[2]], grid[[13]]
    gain = variance_reduction(_over(rows), np.vstack([near, far]), grid)
    assert gain[1] > gain[0] > 0


def test_the_process_serves_when_its_runs_are_the_rows_else_one_over_the_rows_does():
    grid = _grid()
    rows = grid[[0, 7, 14]]
    values = np.log(np.array([1.0, 3.0, 2.0]))
    process = LogTProcess(LEVELS, rows, values, HYPER)
    assert over_rows(process, rows[::-1].copy()) is process
    more = np.vstack([rows, grid[[3]]])  # a run in flight
    other = over_rows(process, more)
    assert other is not process and len(other.rows) == 4
    assert np.allclose(variance_reduction(other, grid, grid),
                       variance_reduction(_over(more), grid, grid))


def test_subset_is_everything_or_a_seeded_ordered_sample():
    small = list(range(10))
    assert seeded_subset(small, 10, seed=3) == small
    big = list(range(1000))
    a, b = seeded_subset(big, 300, seed=3), seeded_subset(big, 300, seed=3)
    assert a == b and len(set(a)) == 300 and a == sorted(a)
    assert seeded_subset(big, 300, seed=4) != a


class _Learner:
    def __init__(self, rows: np.ndarray, process: LogTProcess | None, cost: dict) -> None:
        self.n, self.fitted, self._process, self._cost = len(rows), True, process, cost

    def gp_process(self) -> LogTProcess | None:
        return self._process

    def model(self) -> _Learner:
        return self

    def predicted_T(self, X: np.ndarray) -> np.ndarray:
        return self.predict_many(X)

    def predict_many(self, X: np.ndarray) -> np.ndarray:
        return np.array([self._cost.get(tuple(r), 1.0) for r in X], float)


class _View:
    """The parts of a PlanView that support+edges+variance reads."""

    def __init__(self, measured: list[tuple[float, ...]], process: bool, cost: dict) -> None:
        self.space = ResourceSpace(tuple(Attribute(f"x{j}", tuple(lv))
                                         for j, lv in enumerate(LEVELS)))
        self.measured, self.held_out, self.in_flight = set(measured), set(), set()
        rows = np.asarray(sorted(self.measured), float)
        gp = LogTProcess(LEVELS, rows, np.zeros(len(rows)), HYPER) if process else None
        self.learner = _Learner(rows, gp, cost)

    def taken(self) -> set:
        return self.measured | self.held_out

    def candidate_pool(self, exclude=(), limit=4000) -> list:
        return [c for c in self.space.candidates if c not in self.taken() | set(exclude)]


def _measured_corners_and_more() -> list[tuple[float, ...]]:
    grid = [tuple(r) for r in _grid()]
    return [grid[i] for i in (0, 2, 12, 14, 6, 7)]  # the four corners and two in the middle


def test_with_the_process_blended_in_the_pick_cuts_its_variance_most():
    view = _View(_measured_corners_and_more(), process=True, cost={})
    pool = view.candidate_pool()
    gain = variance_reduction(_over(np.asarray(sorted(view.measured), float)),
                              np.asarray(pool, float), _grid())
    pick = SupportThenVariance().select_free(view)
    assert pick == pool[int(np.argmax(gain))]
    assert pick != SupportPointsAndEdges().select_free(view)  # not what support points take


def test_a_much_dearer_run_gives_way_among_near_equal_cuts():
    view = _View(_measured_corners_and_more(), process=True, cost={})
    first = SupportThenVariance().select_free(view)
    dear = _View(_measured_corners_and_more(), process=True, cost={first: 1e6})
    assert SupportThenVariance().select_free(dear) != first


def test_without_the_process_the_pick_is_the_support_point():
    view = _View(_measured_corners_and_more(), process=False, cost={})
    assert SupportThenVariance().select_free(view) == SupportPointsAndEdges().select_free(view)
