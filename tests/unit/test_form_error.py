"""The fixed-form k-fold error and the estimates that read it (cv_form, cv_fixed)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from test_learning_core import NEW
from test_planner import campaign

from nimo.planner.learner import Learner
from nimo.planner.strategies.error import ERROR_ESTIMATES


def _learner(runs: int = 16) -> Learner:
    planner, _, _ = campaign({**NEW, "stop": {"error_pct": 0, "max_runs": runs}})
    return planner.learner


def test_every_fold_refits_the_delivered_forms(monkeypatch: pytest.MonkeyPatch) -> None:
    learner = _learner()
    forms = {p: (f.response, f.terms) for p, f in learner.fitted.items()}
    seen: list[tuple[str, object]] = []
    original = Learner.fit_on

    def spy(self, p, X, y, options, structure=None, **kw):  # type: ignore[no-untyped-def]
        seen.append((p, structure))
        return original(self, p, X, y, options, structure, **kw)

    monkeypatch.setattr(Learner, "fit_on", spy)
    learner.folds(learner.n, fixed_form=True)
    assert len(seen) == 5 * len(learner.predictor_names)
    assert all(structure == forms[p] for p, structure in seen)


def test_a_form_a_fold_cannot_fit_falls_back_to_the_folds_own_selection(
        monkeypatch: pytest.MonkeyPatch) -> None:
    learner = _learner()
    cv, _ = learner.cv_errors()
    original = Learner.fit_on

    def singular(self, p, X, y, options, structure=None, **kw):  # type: ignore[no-untyped-def]
        if structure is not None:
            raise np.linalg.LinAlgError("Singular matrix")
        return original(self, p, X, y, options, **kw)

    monkeypatch.setattr(Learner, "fit_on", singular)
    # every fold selects afresh: the same folds and fits as the cross-validation
    assert learner.fixed_form_error() == pytest.approx(cv)


def test_cv_form_is_the_geometric_mean_and_cv_fixed_the_fixed_form_error(
        monkeypatch: pytest.MonkeyPatch) -> None:
    learner = _learner()
    monkeypatch.setattr(Learner, "cv_errors", lambda self, folds=5: (9.0, {"f_a": 3.0}))
    monkeypatch.setattr(Learner, "fixed_form_error", lambda self, folds=5: 4.0)
    assert ERROR_ESTIMATES["cv_form"]().score(learner) == (6.0, {"f_a": 3.0})
    assert ERROR_ESTIMATES["cv_fixed"]().score(learner) == (4.0, {"f_a": 3.0})
    # without a fixed-form figure (too few runs, a predictor not yet fitted): cv alone
    monkeypatch.setattr(Learner, "fixed_form_error", lambda self, folds=5: None)
    assert ERROR_ESTIMATES["cv_form"]().score(learner) == (9.0, {"f_a": 3.0})


def test_no_fixed_form_error_before_every_predictor_is_fitted() -> None:
    learner = _learner()
    fitted = dict(learner.fitted)
    learner.fitted.pop(next(iter(fitted)))
    assert learner.fixed_form_error() is None
    learner.fitted.update(fitted)
    value = learner.fixed_form_error()
    assert value is not None and math.isfinite(value) and value >= 0
