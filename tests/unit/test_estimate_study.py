"""The offline internal-error study of benchmarks/learning/estimate_study.py."""

from __future__ import annotations

import pytest
from test_learning_core import NEW
from test_planner import campaign

from benchmarks.learning import estimate_study


def _iteration(cvs: list[float], alls: list[float], apparent: float) -> dict:
    return {"internal_error_pct": cvs[0], "est": {
        "seeds": [{"cv": c, "all": a} for c, a in zip(cvs, alls, strict=True)],
        "apparent": apparent}}


def test_burman_removes_the_gap_between_fold_models_and_the_delivered_one() -> None:
    it = _iteration([8.0, 6.0, 7.0], [5.0, 4.0, 4.5], 2.0)
    # one seed: 8 + 2 - 5; three: the mean of 5, 4 and 4.5
    assert estimate_study.ESTIMATES["burman-1"](it) == pytest.approx(5.0)
    assert estimate_study.ESTIMATES["burman-3"](it) == pytest.approx(4.5)
    assert estimate_study.ESTIMATES["mean-3"](it) == pytest.approx(7.0)
    assert estimate_study.ESTIMATES["median-3"](it) == pytest.approx(7.0)
    # never below zero; without the recorded figures, the planner's own error
    assert estimate_study.ESTIMATES["burman-1"](_iteration([1.0], [9.0], 0.0)) == 0.0
    assert estimate_study.ESTIMATES["burman-3"]({"internal_error_pct": 3.0, "est": {}}) == 3.0


def test_the_first_fold_seed_is_the_planners_own_and_the_learner_is_left_alone() -> None:
    planner, _, _ = campaign({**NEW, "stop": {"error_pct": 0, "max_runs": 16}})
    learner = planner.learner
    cv, _ = learner.cv_errors()
    before = (learner.use_residual, learner._cv_cache)
    figures = estimate_study.estimates(learner)
    assert (learner.use_residual, learner._cv_cache) == before
    assert figures["seeds"][0]["cv"] == pytest.approx(cv)
    assert len(figures["seeds"]) == estimate_study.FOLD_SEEDS
    # the delivered model has seen its runs: its error over them is not above the 5-fold one
    assert figures["apparent"] is not None and figures["apparent"] <= cv + 1e-9
    # the runs' own errors are the planner's cross-validation, run by run
    runs = [e for e in figures["runs"] if e is not None]
    assert len(figures["runs"]) == learner.n and sum(runs) / len(runs) == pytest.approx(cv)
    assert sum(figures["weights"]) == pytest.approx(1.0)
    # the fixed-form folds refit the delivered terms: their runs average to their figure
    fixed = figures["fixed"]
    assert len(fixed["runs"]) == learner.n
    assert sum(fixed["runs"]) / learner.n == pytest.approx(fixed["cv"])


def test_the_fixed_form_estimates_read_the_recorded_figure_or_fall_back() -> None:
    it = {"internal_error_pct": 8.0, "est": {"fixed": {"cv": 2.0}}}
    assert estimate_study.ESTIMATES["fixed"](it) == 2.0
    assert estimate_study.ESTIMATES["fixed-geo"](it) == pytest.approx(4.0)
    assert estimate_study.ESTIMATES["fixed-mean"](it) == pytest.approx(5.0)
    assert estimate_study.ESTIMATES["fixed"]({"internal_error_pct": 8.0, "est": {}}) == 8.0


def test_the_nearest_weighted_estimates_weight_runs_by_their_share_of_the_space() -> None:
    it = {"internal_error_pct": 5.0, "est": {
        "runs": [2.0, None, 10.0], "weights": [0.75, 0.05, 0.20],
        "fixed": {"cv": 3.0, "runs": [1.0, 4.0, 5.0]}}}
    # the run without an error is left out and the others' weights renormalised
    assert estimate_study.ESTIMATES["nearest"](it) == pytest.approx(
        (0.75 * 2 + 0.20 * 10) / 0.95)
    # half by share, half evenly
    assert estimate_study.ESTIMATES["nearest-half"](it) == pytest.approx(
        0.5 * (0.75 * 2 + 0.20 * 10) / 0.95 + 0.5 * 6.0)
    fixed = 0.75 * 1 + 0.05 * 4 + 0.20 * 5
    assert estimate_study.ESTIMATES["nearest-form"](it) == pytest.approx(
        ((0.75 * 2 + 0.20 * 10) / 0.95 * fixed) ** 0.5)
    # without recorded runs: the planner's own figure
    assert estimate_study.ESTIMATES["nearest-form"]({"internal_error_pct": 5.0, "est": {}}) == 5.0
