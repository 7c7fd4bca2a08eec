"""``error: cv_spread_checked``: the committee's spread checked against the runs the model
predicted before they ran (``committee.gap_pct``, ``CheckedSpreadCrossValidated``)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from test_learning_core import NEW
from test_planner import campaign

from nimo.planner.committee import gap_pct
from nimo.planner.design import parse_design
from nimo.planner.learner import Learner
from nimo.planner.strategies import error as error_module
from nimo.planner.strategies.error import ERROR_ESTIMATES, CheckedSpreadCrossValidated
from nimo.records import Sample


def _learner(runs: int = 16) -> Learner:
    planner, _, _ = campaign({**NEW, "stop": {"error_pct": 0, "max_runs": runs}})
    return planner.learner


def _checked(checks: list[tuple[float, float]]) -> CheckedSpreadCrossValidated:
    estimate = CheckedSpreadCrossValidated()
    estimate.checks = list(checks)
    return estimate


def test_the_gap_is_the_median_members_relative_difference_at_the_run(
        monkeypatch: pytest.MonkeyPatch) -> None:
    learner = _learner()

    def committee(rows: np.ndarray, plausible_only: bool = False) -> np.ndarray:
        assert plausible_only and len(rows) == 1
        model = np.full(len(rows), 10.0)
        return np.vstack([model, model * 1.1, model * 0.7, model * 1.2, model * 40.0])

    monkeypatch.setattr(learner, "committee", committee)
    # 10, 30, 20 and 3,900% off (counted as 100%): the median member is 25% off
    assert gap_pct(learner, np.zeros((1, 3))) == pytest.approx(25.0)


def test_no_plausible_member_gives_no_gap(monkeypatch: pytest.MonkeyPatch) -> None:
    learner = _learner()
    monkeypatch.setattr(learner, "committee",
                        lambda rows, plausible_only=False: np.full((1, len(rows)), 10.0))
    assert gap_pct(learner, np.zeros((1, 3))) == 0.0


@pytest.mark.parametrize(("checks", "scale"), [
    ([(10.0, 3.0)] * 4, 1.0),                       # fewer than 5 checks: unscaled
    ([(10.0, 3.0)] * 5, 0.3),                       # the model missed by 3 where they said 10
    ([(10.0, 30.0)] * 8, 1.0),                      # it missed by more: at most 1
    ([(0.0, 3.0)] * 8, 1.0),                        # no gap to check against
    ([(50.0, 50.0)] * 20 + [(10.0, 2.0)] * 10, 0.2),  # only the last 10 count
])
def test_the_scale_is_the_recent_errors_over_the_recent_gaps(
        checks: list[tuple[float, float]], scale: float) -> None:
    assert _checked(checks).spread_scale() == pytest.approx(scale)


def test_the_estimate_reads_the_scaled_spread(monkeypatch: pytest.MonkeyPatch) -> None:
    learner = _learner()
    monkeypatch.setattr(Learner, "cv_errors", lambda self, folds=5: (10.0, {}))
    monkeypatch.setattr(Learner, "fixed_form_error", lambda self, folds=5: 10.0)
    monkeypatch.setattr(error_module, "spread_pct", lambda lr, **_: 40.0)
    checked = _checked([(20.0, 5.0)] * 10)  # scale 0.25
    assert checked.score(learner)[0] == pytest.approx(math.hypot(8.0, 0.75 * 0.25 * 40.0))
    assert ERROR_ESTIMATES["cv_spread"]().score(learner)[0] == pytest.approx(
        math.hypot(8.0, 30.0))
    assert parse_design({"error": "cv_spread_checked"}).error == "cv_spread_checked"


def test_a_run_is_noted_only_where_the_spread_was_taken_at_that_count(
        monkeypatch: pytest.MonkeyPatch) -> None:
    learner = _learner()
    monkeypatch.setattr(error_module, "gap_pct", lambda lr, row: 12.0)
    sample = Sample(assignment=learner.space.as_dict(learner.space.candidates[0]), T=5.0)
    estimate = CheckedSpreadCrossValidated()
    estimate.note_run(learner, sample, 4.0)  # no spread yet
    estimate._spread = (learner.n - 1, 9.0)
    estimate.note_run(learner, sample, 4.0)  # a stale spread: the committee may be stale
    estimate._spread = (learner.n, 0.0)
    estimate.note_run(learner, sample, 4.0)  # no spread to scale
    estimate._spread = (learner.n, 9.0)
    estimate.note_run(learner, sample, None)  # no prospective error
    assert estimate.checks == []
    estimate.note_run(learner, sample, 4.0)
    assert estimate.checks == [(12.0, 4.0)]


def test_a_campaign_checks_its_spread_against_its_prospective_errors() -> None:
    planner, _, _ = campaign({**NEW, "error": "cv_spread_checked",
                              "stop": {"error_pct": 0, "max_runs": 24}})
    estimate = planner.strategies.error
    assert isinstance(estimate, CheckedSpreadCrossValidated)
    assert len(estimate.checks) >= 5
    noted = [err for _, err in estimate.checks]
    assert all(err in planner.prospective_errors for err in noted)
    assert all(gap >= 0.0 for gap, _ in estimate.checks)
    assert 0.0 <= estimate.spread_scale() <= 1.0
