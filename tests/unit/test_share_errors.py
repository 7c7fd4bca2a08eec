"""``predictors.share_errors``: an occupancy predictor's form is chosen by the error it makes
in T (each sample's error relative to its total occupancy o_a + o_n + o_d), not by its own
relative error, which samples where that occupancy is a negligible part of T dominate."""

from __future__ import annotations

import numpy as np
import pytest

from nimo.errors import ConfigError
from nimo.metrics import fit_error_pct
from nimo.planner.learner import Learner
from nimo.planner.targets import share_scale
from nimo.predictors import PredictorOptions, fit_predictor
from nimo.records import Sample
from nimo.space import Attribute, ResourceSpace


def test_the_scale_is_the_total_occupancy_for_occupancies_only() -> None:
    values = {"f_a": [1.0, 2.0], "f_n": [0.5, 0.0], "f_d": [0.5, 1.0], "f_D": [9.0, 9.0]}
    for p in ("f_a", "f_n", "f_d"):
        np.testing.assert_array_equal(share_scale(values, p), [2.0, 3.0])
    assert share_scale(values, "f_D") is None
    assert share_scale({"f_T": [1.0]}, "f_T") is None


def test_an_error_counts_by_the_share_of_t_it_moves() -> None:
    y, yhat = np.array([0.01, 1.0]), np.array([0.02, 1.0])  # 100% off where y is tiny
    assert fit_error_pct(y, yhat) == pytest.approx(50.0)
    assert fit_error_pct(y, yhat, scale=np.array([2.0, 2.0])) == pytest.approx(0.25)


def test_a_predictors_loo_error_is_relative_to_the_scale_given() -> None:
    rng = np.random.default_rng(5)
    X = rng.choice([1.0, 2.0, 4.0, 8.0], size=(20, 1))
    y = 0.001 + 0.5 / X[:, 0] * (1 + 0.05 * rng.standard_normal(20))
    scale = y + 3.0
    opts = PredictorOptions(final_fit="numpy")
    plain = fit_predictor("o_n", X, y, ("bw",), ("bw",), (2.0,), 0.25, {}, opts)
    shared = fit_predictor("o_n", X, y, ("bw",), ("bw",), (2.0,), 0.25, {}, opts,
                           error_scale=scale)
    loo = shared.loo_predictions(X, y)
    assert shared.loo_mape == pytest.approx(fit_error_pct(y, loo, scale))
    assert shared.loo_mape is not None and plain.loo_mape is not None
    assert shared.loo_mape < plain.loo_mape


def test_the_option_is_a_boolean_echoed_only_when_set() -> None:
    assert PredictorOptions.from_dict({"share_errors": True}).share_errors
    assert "share_errors" not in PredictorOptions().to_dict()
    assert PredictorOptions(share_errors=True).to_dict()["share_errors"] is True
    with pytest.raises(ConfigError, match="share_errors must be true or false"):
        PredictorOptions.from_dict({"share_errors": "yes"})


def learner_on_a_grid(share: bool) -> Learner:
    space = ResourceSpace((Attribute("bw", (10.0, 100.0, 1000.0)),
                           Attribute("cpu", (0.25, 0.5, 1.0))))
    learner = Learner(space, "occupancy", (100.0, 0.5),
                      PredictorOptions(final_fit="numpy", share_errors=share))
    for p in learner.predictor_names:
        learner.active[p] = ["bw", "cpu"]
    for bw in (10.0, 100.0, 1000.0):
        for cpu in (0.25, 0.5, 1.0):
            o = {"o_a": 1.0 / cpu, "o_n": 2.0 / bw + 0.001, "o_d": 0.1, "D": 50.0}
            learner.add(Sample(assignment={"bw": bw, "cpu": cpu},
                               T=o["D"] * (o["o_a"] + o["o_n"] + o["o_d"]), **o))
    learner.refit()
    return learner


def test_a_learner_judges_occupancies_and_their_folds_by_the_share_of_t() -> None:
    learner = learner_on_a_grid(share=True)
    total = np.array([s.target("o_a") + s.target("o_n") + s.target("o_d")
                      for s in learner.samples])
    f_n = learner.fitted["f_n"]
    y = learner.y("f_n")
    assert f_n.loo_mape == pytest.approx(fit_error_pct(y, f_n.loo_predictions(learner.X, y),
                                                       total))
    D = learner.fitted["f_D"]
    assert D.loo_mape == pytest.approx(
        fit_error_pct(learner.y("f_D"), D.loo_predictions(learner.X, learner.y("f_D"))))
    mask = np.arange(learner.n) % 3 != 0
    fold = learner.fit_on("f_n", learner.X[mask], y[mask], learner.options, rows=mask)
    assert fold.loo_mape == pytest.approx(fit_error_pct(
        y[mask], fold.loo_predictions(learner.X[mask], y[mask]), total[mask]))
    assert learner.folds(learner.n).predicted.shape == (learner.n,)
