"""The committee of alternative fits (nimo.planner.committee)."""

from __future__ import annotations

import numpy as np
from test_learning_core import NEW
from test_planner import SPACE, campaign, truth

from nimo.planner.committee import MEMBERS, fill_nan


def test_the_committee_predicts_with_the_model_and_every_member_and_caches_its_fits() -> None:
    planner, _, _ = campaign({**NEW, "stop": {"error_pct": 0, "max_runs": 14}})
    learner = planner.learner
    X = np.asarray(SPACE.candidates[:9], float)
    preds = learner.committee(X)
    assert preds.shape == (1 + len(MEMBERS), 9)
    assert np.allclose(preds[0], learner.model().predict_many(X))
    fits = learner._committee.fits()
    assert learner._committee.fits() is fits  # same data: the cached fits
    learner.add(truth(*SPACE.candidates[-1]))
    learner.refit()
    assert learner._committee.fits() is not fits  # one more run: refitted
    # plausible members only: never more rows, the fitted model always first
    plausible = learner.committee(X, plausible_only=True)
    assert 1 <= plausible.shape[0] <= preds.shape[0]
    assert np.allclose(plausible[0], learner.model().predict_many(X))


def test_fill_nan_predicts_leverage_one_points_by_the_mean_of_the_others() -> None:
    y = np.array([1.0, 2.0, 3.0, 6.0])
    loo = np.array([1.5, np.nan, 2.5, np.nan])
    # each point without one: the mean of the other three runs, (12 - 2) / 3 and (12 - 6) / 3
    assert np.allclose(fill_nan(loo, y), [1.5, 10 / 3, 2.5, 2.0])
    assert np.isnan(loo[1])  # the input is left alone
