"""The committee's spread over the candidates not run, and the estimates that read it
(``error: cv_spread``, ``error: cv_excess``)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from test_learning_core import NEW
from test_planner import campaign

from nimo.planner import committee as committee_module
from nimo.planner.committee import spread_pct
from nimo.planner.design import parse_design
from nimo.planner.learner import Learner
from nimo.planner.strategies import error as error_module
from nimo.planner.strategies.error import ERROR_ESTIMATES


def _learner(runs: int = 16) -> Learner:
    planner, _, _ = campaign({**NEW, "stop": {"error_pct": 0, "max_runs": runs}})
    return planner.learner


def _folds_read(monkeypatch: pytest.MonkeyPatch, error: float,
                per: dict[str, float] | None = None) -> None:
    """Both fold errors (``cv_errors``, ``fixed_form_error``) read ``error``."""
    monkeypatch.setattr(Learner, "cv_errors", lambda self, folds=5: (error, per or {}))
    monkeypatch.setattr(Learner, "fixed_form_error", lambda self, folds=5: error)


def test_the_spread_is_the_median_members_mean_relative_gap_off_the_runs(
        monkeypatch: pytest.MonkeyPatch) -> None:
    learner = _learner()
    seen: list[np.ndarray] = []

    def committee(rows: np.ndarray, plausible_only: bool = False) -> np.ndarray:
        assert plausible_only
        seen.append(rows)
        model = np.full(len(rows), 10.0)
        # members 10%, 30% and 20% off everywhere: the median member is 20% off
        return np.vstack([model, model * 1.1, model * 0.7, model * 1.2])

    monkeypatch.setattr(learner, "committee", committee)
    assert spread_pct(learner) == pytest.approx(20.0)
    run = {tuple(r) for r in np.round(learner.X, 9)}
    assert seen and not run & {tuple(r) for r in np.round(seen[0], 9)}
    assert len(seen[0]) == len(learner.space.candidates) - len(run)


def test_a_candidate_counts_at_most_100_percent(monkeypatch: pytest.MonkeyPatch) -> None:
    learner = _learner()

    def committee(rows: np.ndarray, plausible_only: bool = False) -> np.ndarray:
        model = np.full(len(rows), 10.0)
        wild = model.copy()
        wild[: len(rows) // 2] *= 50.0  # 4,900% off at half the candidates, right elsewhere
        return np.vstack([model, wild])

    monkeypatch.setattr(learner, "committee", committee)
    half = (len(learner.space.candidates) - learner.n) // 2
    expected = 100.0 * half / (len(learner.space.candidates) - learner.n)
    assert spread_pct(learner) == pytest.approx(expected)


def test_no_plausible_member_is_no_spread_and_no_candidate_left_is_unmeasured(
        monkeypatch: pytest.MonkeyPatch) -> None:
    learner = _learner()
    monkeypatch.setattr(learner, "committee",
                        lambda rows, plausible_only=False: np.ones((1, len(rows))))
    assert spread_pct(learner) == 0.0
    monkeypatch.setattr(committee_module, "sampled_candidates",
                        lambda candidates: np.asarray(learner.X, float))
    assert spread_pct(learner) is None


def test_a_real_committee_gives_a_finite_spread() -> None:
    value = spread_pct(_learner())
    assert value is not None and math.isfinite(value) and value >= 0


def test_cv_spread_scales_the_folds_and_adds_the_spread_in_quadrature(
        monkeypatch: pytest.MonkeyPatch) -> None:
    learner = _learner()
    _folds_read(monkeypatch, 10.0, {"f_a": 3.0})
    monkeypatch.setattr(error_module, "spread_pct", lambda learner, **_: 8.0)
    # 0.8 x 10 = 8 and 0.75 x 8 = 6: sqrt(64 + 36) = 10
    assert ERROR_ESTIMATES["cv_spread"]().score(learner) == (pytest.approx(10.0), {"f_a": 3.0})
    monkeypatch.setattr(error_module, "spread_pct", lambda learner, **_: 0.0)
    assert ERROR_ESTIMATES["cv_spread"]().score(learner)[0] == pytest.approx(8.0)
    # every candidate run: nothing to measure the spread on, the folds' error unscaled
    monkeypatch.setattr(error_module, "spread_pct", lambda learner, **_: None)
    assert ERROR_ESTIMATES["cv_spread"]().score(learner)[0] == pytest.approx(10.0)
    monkeypatch.setattr(Learner, "cv_errors", lambda self, folds=5: (None, {"f_a": None}))
    assert ERROR_ESTIMATES["cv_spread"]().score(learner) == (None, {"f_a": None})


def test_the_spread_is_recomputed_only_when_the_folds_are(
        monkeypatch: pytest.MonkeyPatch) -> None:
    learner = _learner()
    calls: list[int] = []
    _folds_read(monkeypatch, 4.0)
    monkeypatch.setattr(error_module, "spread_pct",
                        lambda lr, **_: calls.append(lr.n) or 1.0)
    estimate = ERROR_ESTIMATES["cv_spread"]()
    count = [0]
    monkeypatch.setattr(Learner, "n", property(lambda self: count[0]))
    for n in (16, 16, 17, 50, 53, 56):
        count[0] = n
        estimate.score(learner)
    # every new count up to 40; beyond, once the count grew by a tenth (50 -> 56, not 53)
    assert calls == [16, 17, 50, 56]


def test_a_design_may_name_cv_spread_with_the_correction() -> None:
    design = parse_design({"predictors": {"bounded": True, "residual": True},
                           "error": "cv_spread"})
    assert design.error == "cv_spread" and design.predictors["residual"] is True


def test_the_excess_spread_counts_a_member_only_beyond_its_own_error(
        monkeypatch: pytest.MonkeyPatch) -> None:
    learner = _learner()

    def committee(rows: np.ndarray, plausible_only: bool = False) -> np.ndarray:
        model = np.full(len(rows), 10.0)
        return np.vstack([model, model * 1.1, model * 0.7, model * 1.2])  # 10, 30, 20% off

    monkeypatch.setattr(learner, "committee", committee)
    # own errors 6, 40 and 12%: beyond them 8, 0 and 16%; the median member 8%
    monkeypatch.setattr(learner, "committee_errors", lambda: [6.0, 40.0, 12.0])
    assert spread_pct(learner, excess=True) == pytest.approx(8.0)
    assert spread_pct(learner) == pytest.approx(20.0)


def test_the_committee_errors_are_the_plausible_members_in_order() -> None:
    learner = _learner()
    best, _ = learner.loo_errors()
    errors = learner.committee_errors()
    rows = np.asarray(learner.space.candidates[:5], float)
    assert len(errors) == len(learner.committee(rows, plausible_only=True)) - 1
    assert best is not None and all(e <= max(1.5 * best, best + 2.0) for e in errors)


def test_cv_excess_reads_the_excess_spread(monkeypatch: pytest.MonkeyPatch) -> None:
    learner = _learner()
    _folds_read(monkeypatch, 10.0)
    monkeypatch.setattr(error_module, "spread_pct",
                        lambda lr, excess=False, **_: 8.0 if excess else 100.0)
    assert ERROR_ESTIMATES["cv_excess"]().score(learner)[0] == pytest.approx(10.0)
    assert ERROR_ESTIMATES["cv_spread"]().score(learner)[0] == pytest.approx(
        math.hypot(8.0, 75.0))


class _Process:
    """A process that predicts ``value`` everywhere, informed by the runs to ``informed``."""

    def __init__(self, value: float, informed: float) -> None:
        self.value, self.informed = value, informed

    def predict_informed(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return np.full(len(X), self.value), np.full(len(X), self.informed)


def test_the_blended_spread_blends_the_members_as_the_model(
        monkeypatch: pytest.MonkeyPatch) -> None:
    learner = _learner()
    level = float(np.median(learner.T()))  # inside the model's bounds

    def committee(rows: np.ndarray, plausible_only: bool = False) -> np.ndarray:
        model = np.full(len(rows), level)
        return np.vstack([model, model * 1.2, model * 1.2])  # 20% off everywhere

    monkeypatch.setattr(learner, "committee", committee)
    monkeypatch.setattr(Learner, "residual_field", lambda self: None)
    monkeypatch.setattr(Learner, "gp_process", lambda self: None)
    # no correction and no blend: the same as cv_spread's
    assert spread_pct(learner, like_model=True) == pytest.approx(20.0)
    # blended as P^(1-v) G^v with v = 0.5 x 1 and G the model's T: sqrt(1.2) - 1 off
    monkeypatch.setattr(Learner, "gp_process", lambda self: _Process(level, 1.0))
    monkeypatch.setattr(learner.blend, "weight", 0.5)
    assert spread_pct(learner, like_model=True) == pytest.approx(100 * (math.sqrt(1.2) - 1))
    assert spread_pct(learner) == pytest.approx(20.0)
    # fully informed at full weight: the members are the process, nothing is left to spread
    monkeypatch.setattr(learner.blend, "weight", 1.0)
    assert spread_pct(learner, like_model=True) == pytest.approx(0.0)


def test_the_blended_spread_applies_the_models_correction_to_the_members(
        monkeypatch: pytest.MonkeyPatch) -> None:
    learner = _learner()
    level = float(np.median(learner.T()))

    class Field:
        def factor(self, X: np.ndarray) -> np.ndarray:
            return np.full(len(X), 0.9)

    def committee(rows: np.ndarray, plausible_only: bool = False) -> np.ndarray:
        model = np.full(len(rows), level)  # the model, corrected by 0.9: its fit was level/0.9
        return np.vstack([model, model / 0.9])  # a member as the uncorrected fit

    monkeypatch.setattr(learner, "committee", committee)
    monkeypatch.setattr(Learner, "gp_process", lambda self: None)
    monkeypatch.setattr(Learner, "residual_field", lambda self: Field())
    assert spread_pct(learner, like_model=True) == pytest.approx(0.0)
    assert spread_pct(learner) == pytest.approx(100 * (1 / 0.9 - 1))


def test_cv_spread_blended_asks_for_the_members_like_the_model(
        monkeypatch: pytest.MonkeyPatch) -> None:
    learner = _learner()
    asked: list[bool] = []
    _folds_read(monkeypatch, 10.0)
    monkeypatch.setattr(error_module, "spread_pct",
                        lambda lr, excess=False, like_model=False: asked.append(like_model) or 8.0)
    assert ERROR_ESTIMATES["cv_spread_blended"]().score(learner)[0] == pytest.approx(10.0)
    assert ERROR_ESTIMATES["cv_spread"]().score(learner)[0] == pytest.approx(10.0)
    assert asked == [True, False]
    assert parse_design({"error": "cv_spread_blended"}).error == "cv_spread_blended"
