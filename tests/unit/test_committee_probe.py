"""The committee probe's scoring: reach and keep by runs, and the printed comparison."""

from __future__ import annotations

import math

import numpy as np

from benchmarks.learning.committee_probe import CommitteeScores, reach_run, score


def test_reach_run_is_the_run_from_which_every_later_value_is_within_target() -> None:
    assert reach_run([30.0, 12.0, 9.0, 8.0]) == 3.0
    assert reach_run([9.0, 8.0]) == 1.0
    assert reach_run([9.0, 11.0, 8.0]) == 3.0  # lost at run 2, kept from run 3
    assert math.isinf(reach_run([9.0, 8.0, 11.0]))  # lost at the last run
    assert math.isinf(reach_run([None, 20.0]))
    assert reach_run([None, 5.0]) == 2.0  # no model at run 1 counts as a miss


def test_score_counts_campaigns_where_an_average_reaches_earlier_or_later() -> None:
    def rec(series: list[tuple[float, float, float, float] | None]) -> dict:
        return {"case": "c", "seed": 1, "rows": [list(r) if r else None for r in series]}

    records = [rec([None, (20, 9, 20, 12), (8, 8, 8, 8)]),  # geomean earlier
               rec([None, (9, 20, 9, 9), (9, 9, 9, 9)]),  # geomean later
               rec([None, (15, 15, 15, 15), (15, 15, 15, 15)])]  # none reaches
    lines = score(records)
    assert lines[0].startswith("3 campaigns")
    delivered = lines[2].split()
    assert delivered[0] == "delivered" and delivered[1] == "2" and delivered[2] == "3"
    assert "committee geomean: reaches earlier than delivered in 1, later in 1" in lines
    assert "committee median: reaches earlier than delivered in 0, later in 0" in lines


class _Model:
    def __init__(self, factor: float) -> None:
        self.factor = factor

    def predict_many(self, X: np.ndarray) -> np.ndarray:
        return X[:, 0] * self.factor


class _Learner:
    def committee(self, X: np.ndarray, plausible_only: bool = False) -> np.ndarray:
        assert plausible_only
        return np.vstack([X[:, 0] * 2.0, X[:, 0] * 0.5, np.full(len(X), np.nan)])


def test_averages_skip_non_finite_members_and_score_each_predictor() -> None:
    X = np.array([[1.0], [4.0]])
    T = X[:, 0].copy()
    mapes = CommitteeScores._averages(_Learner(), _Model(1.5), X, T)
    # geomean of 2x and 0.5x is exact; median of the two is 1.25x; delivered 1.5x;
    # delivered x geomean sqrt(1.5)x
    assert np.allclose(mapes, [50.0, 0.0, 25.0, 100 * (math.sqrt(1.5) - 1)])
