"""Relative weighted least squares (``predictors.weighted``): an identity response is fitted,
and its terms selected, by least squares weighted by 1/y^2, so each run counts by its
relative error; the closed-form leave-one-out error is that of the weighted refit, and the
predictor says how it was fitted."""

from __future__ import annotations

import numpy as np
import pytest

from nimo.errors import ConfigError
from nimo.model import FittedPredictor
from nimo.model.features import Term
from nimo.predictors import PredictorOptions, fit_predictor
from nimo.predictors.select import GreedySearch

LEVELS = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0]
FORM = ("identity", [Term.main("x", "reciprocal")])


def _transfer(seed: int, noise: float = 0.05, repeats: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """A time ``0.5 + 40/x`` over a 64x range, each run off by ``noise`` of itself."""
    rng = np.random.default_rng(seed)
    x = np.repeat(LEVELS, repeats)
    y = (0.5 + 40.0 / x) * (1 + noise * rng.standard_normal(x.size))
    return x[:, None], y


def _fit(X: np.ndarray, y: np.ndarray, weighted: bool, structure=FORM,
         log_response: bool = True) -> FittedPredictor:
    options = PredictorOptions(relative_noise=True, weighted=weighted, log_response=log_response)
    return fit_predictor("T", X, y, ("x",), ("x",), (8.0,), 5.5, {"x": LEVELS},
                         options=options, structure=structure)


def test_the_fast_end_is_fitted_by_its_relative_error() -> None:
    """Ordinary least squares lets the slow runs' large absolute scatter set the intercept;
    the weighted fit is closer, relative to T, at the fast end and no worse at the slow."""
    ends = np.array([[1.0], [64.0]])
    truth = 0.5 + 40.0 / ends[:, 0]
    errors = {False: [], True: []}
    for seed in range(200):
        X, y = _transfer(seed)
        for weighted in (False, True):
            errors[weighted].append(np.abs(_fit(X, y, weighted).predict(ends) / truth - 1))
    ols, wls = np.mean(errors[False], axis=0), np.mean(errors[True], axis=0)
    assert wls[1] < 0.8 * ols[1]  # fast end (x = 64, T ~ 1.1)
    assert wls[0] < 1.1 * ols[0]  # slow end


def test_the_weighted_fit_minimises_the_relative_squared_error() -> None:
    X, y = _transfer(seed=7)
    pred = _fit(X, y, weighted=True)
    assert pred.weighted and pred.variance == "relative"
    A, r = pred.design(X), y / pred.y_scale
    expected, *_ = np.linalg.lstsq(A / r[:, None], np.ones_like(r), rcond=None)
    np.testing.assert_allclose(pred.params, expected, rtol=1e-9)
    assert 0.02**2 < pred.resid_var < 0.1**2  # the relative noise's variance (5%)


def test_leave_one_out_is_the_weighted_refit_without_the_run() -> None:
    X, y = _transfer(seed=11)
    pred = _fit(X, y, weighted=True)
    loo = pred.loo_predictions(X, y)
    for i in range(y.size):
        keep = np.arange(y.size) != i
        refit = _fit(X[keep], y[keep], weighted=True, structure=(pred.response, pred.terms))
        assert loo[i] == pytest.approx(float(refit.predict(X[i:i + 1])[0]), rel=1e-9)


def test_selection_and_fit_agree_with_the_weighted_fit() -> None:
    """The greedy search's running LOO error with row weights is the weighted refit's."""
    X, y = _transfer(seed=5)
    pred = _fit(X, y, weighted=True, structure=None, log_response=False)
    assert pred.terms and pred.weighted
    path_error = pred.info["path"][-1][1]
    assert pred.loo_mape == pytest.approx(path_error, rel=1e-6)


def test_unit_row_weights_search_like_ordinary_least_squares() -> None:
    X, y = _transfer(seed=2)
    z = X[:, 0] / 8.0
    C = np.column_stack([1 / z, z, np.log(z)])
    weights = 1 / y
    plain = GreedySearch(r=y, y=y, weights=weights, y_scale=1.0)
    ones = GreedySearch(r=y, y=y, weights=weights, y_scale=1.0, row_scale=np.ones(y.size))
    np.testing.assert_allclose(plain.evaluate(C), ones.evaluate(C), rtol=1e-9)
    other = GreedySearch(r=y, y=y, weights=weights, y_scale=1.0, row_scale=1 / y)
    assert not np.allclose(plain.evaluate(C), other.evaluate(C))


def test_the_model_file_says_the_predictor_was_weighted() -> None:
    X, y = _transfer(seed=3)
    pred = _fit(X, y, weighted=True)
    back = FittedPredictor.from_dict(pred.to_dict(), ("x",))
    assert back.weighted
    np.testing.assert_allclose(back.loo_predictions(X, y), pred.loo_predictions(X, y))
    assert "weighted" not in _fit(X, y, weighted=False).to_dict()


def test_a_log_response_is_not_weighted() -> None:
    X, y = _transfer(seed=4)
    pred = _fit(X, y, weighted=True, structure=("log", FORM[1]))
    assert not pred.weighted and pred.variance == "constant"


def test_the_option_must_be_a_boolean() -> None:
    with pytest.raises(ConfigError, match="predictors.weighted"):
        PredictorOptions.from_dict({"weighted": "yes"})
    assert PredictorOptions.from_dict({"weighted": True}).to_dict()["weighted"] is True
    assert "weighted" not in PredictorOptions().to_dict()


def test_a_campaign_with_the_option_delivers_weighted_predictors(tmp_path) -> None:
    from pathlib import Path

    from nimo.campaign import Campaign, current_model
    from nimo.planner import make_planner
    from workbench.designs import load_design
    from workbench.replay import open_replay

    design = tmp_path / "weighted.yaml"
    design.write_text("extends: recommended\nname: weighted\npredictors: {weighted: true}\n")
    data = Path(__file__).resolve().parents[2] / "datasets" / "lab" / "checksum.csv"
    runner, external = open_replay(str(data), seed=2)
    planner = make_planner(runner.space, load_design(str(design)), 2, runner.kind)
    Campaign(planner, runner, external=external).run()
    predictors = current_model(planner).predictors.values()
    identity = [p for p in predictors if p.response == "identity" and p.terms]
    assert identity and all(p.weighted and p.variance == "relative" for p in identity)
    assert not any(p.weighted for p in predictors if p.response == "log")
