"""Noise proportional to the prediction (``nimo.predictors.variance``) and a blended model's
intervals from its out-of-fold residuals (``nimo.model.cost.CV``): an identity-response
predictor's interval follows the size of what it predicts, its coefficients are those of
least squares, the model file says so (version 5), and the calibration methods keep their
rules."""

from __future__ import annotations

import math

import numpy as np
import pytest

from nimo.errors import ModelError
from nimo.model import CostModel, FittedPredictor
from nimo.model.calibration import CV, HOLDOUT, LOO
from nimo.model.features import Term
from nimo.model.versions import VERSION_RELATIVE
from nimo.predictors import PredictorOptions, fit_predictor
from nimo.predictors.variance import relative_noise

LEVELS = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0]
FORM = ("identity", [Term.main("x", "reciprocal")])


def _transfer(seed: int, noise: float = 0.05, repeats: int = 8) -> tuple[np.ndarray, np.ndarray]:
    """A time ~ 1/bandwidth over a 32x range, each run off by ``noise`` of itself."""
    rng = np.random.default_rng(seed)
    x = np.repeat(LEVELS, repeats)
    y = (0.5 + 40.0 / x) * (1 + noise * rng.standard_normal(x.size))
    return x[:, None], y


def _fit(X: np.ndarray, y: np.ndarray, structure=FORM, relative: bool = True
         ) -> FittedPredictor:
    return fit_predictor("T", X, y, ("x",), ("x",), (8.0,), 5.5, {"x": LEVELS},
                         options=PredictorOptions(relative_noise=relative), structure=structure)


def test_the_interval_follows_the_size_of_the_prediction() -> None:
    X, y = _transfer(seed=1)
    pred = _fit(X, y)
    assert pred.variance == "relative"
    ends = np.array([[1.0], [32.0]])
    sd = np.sqrt(pred.predict_var(ends)) / pred.predict(ends)
    assert abs(sd[0] / sd[1] - 1) < 0.5  # ~5% at both ends (constant noise: 40x apart)
    assert 0.03 < sd[0] < 0.08
    A = pred.design(X)
    r = y / pred.y_scale
    ols, *_ = np.linalg.lstsq(A, r, rcond=None)
    np.testing.assert_allclose(pred.params, ols, rtol=1e-9)  # no prediction changes


def test_fresh_runs_fall_inside_the_interval_at_both_ends() -> None:
    """Over 300 campaigns' fits, a fresh run at either end of the range lands inside the
    90% interval about 90% of the time (a constant variance: ~100% at the fast end, where
    a 5% jitter is small, and too few at the slow one)."""
    rng = np.random.default_rng(3)
    inside = {1.0: 0, 32.0: 0}
    for seed in range(300):
        pred = _fit(*_transfer(seed=100 + seed, repeats=3))
        for x in inside:
            row = np.array([[x]])
            fresh = (0.5 + 40.0 / x) * (1 + 0.05 * rng.standard_normal())
            half = 1.75 * math.sqrt(float(pred.predict_var(row)[0]))  # t, 16 dof
            inside[x] += abs(fresh - float(pred.predict(row)[0])) <= half
    assert all(0.8 <= hits / 300 <= 0.95 for hits in inside.values()), inside


def test_undefined_relative_noise_falls_back() -> None:
    A = np.column_stack([np.ones(3), [1.0, 2.0, 3.0]])
    assert relative_noise(A[:2], np.array([1.0, 2.0]), np.array([0.0, 1.0])) is None  # no dof
    assert relative_noise(A, np.zeros(3), np.zeros(2)) is None  # fitted values all zero
    X, y = _transfer(seed=4)
    log_fit = _fit(X, y, structure=("log", [Term.main("x", "log")]))
    assert log_fit.variance == "constant"  # a log response is relative already
    assert _fit(X, y, relative=False).variance == "constant"  # the paper's regression


def test_the_model_file_carries_the_variance_and_its_version() -> None:
    X, y = _transfer(seed=5)
    pred = _fit(X, y)
    attrs = [{"name": "x", "levels": LEVELS, "direction": 1, "resource": "network",
              "unit": ""}]
    model = CostModel(attrs, {"x": 8.0}, "direct", {"T": pred}, {})
    doc = model.to_dict()
    assert doc["version"] == VERSION_RELATIVE == 5
    assert doc["predictors"]["T"]["variance"] == "relative"
    back = CostModel.from_dict(doc)
    rows = np.array([[1.0], [3.0], [32.0]])
    np.testing.assert_allclose(back.predictors["T"].predict_var(rows), pred.predict_var(rows))
    for bad in ({"variance": "wild"}, {"variance": "relative", "response": "log"}):
        broken = {**doc["predictors"]["T"], **bad}
        with pytest.raises(ModelError, match="variance"):
            FittedPredictor.from_dict(broken, ["x"])


def test_out_of_fold_residuals_set_the_interval_loo_ones_only_widen_it() -> None:
    X, y = _transfer(seed=6)
    attrs = [{"name": "x", "levels": LEVELS, "direction": 1, "resource": "network",
              "unit": ""}]
    model = CostModel(attrs, {"x": 8.0}, "direct", {"T": _fit(X, y)}, {})
    small = [0.1 * (i + 1) / 20 for i in range(20)]  # every residual a tenth of an sd
    dof = float(model.predictors["T"].dof)
    t90 = model.interval_multiplier(0.9, dof)
    narrow = model.calibrated({"method": CV, "z": small})
    assert narrow.interval_multiplier(0.9, dof) == pytest.approx(small[18])
    assert model.calibrated({"method": LOO, "z": small}).interval_multiplier(0.9, dof) == t90
    wide = [3.0] * 20
    assert narrow.calibrated({"method": CV, "z": wide}).interval_multiplier(0.9, dof) == 3.0
    p = narrow.predict_interval({"x": 4.0})
    assert (p.hi - p.lo) / 2 == pytest.approx(small[18] * p.std, rel=1e-9)


def test_a_blended_campaign_model_is_calibrated_on_its_out_of_fold_residuals() -> None:
    from pathlib import Path

    from nimo.campaign import Campaign, current_model
    from nimo.planner import make_planner
    from workbench.designs import load_design
    from workbench.replay import open_replay

    data = Path(__file__).resolve().parents[2] / "datasets" / "lab" / "checksum.csv"
    runner, external = open_replay(str(data), seed=3)
    planner = make_planner(runner.space, load_design("recommended"), 3, runner.kind)
    Campaign(planner, runner, external=external).run()
    model = current_model(planner)
    assert model.gp_weight > 0  # 192 assignments: the blend is in from 10 runs
    z = model.calibration["z"]
    assert model.calibration["method"] == CV and 10 <= len(z) <= planner.learner.n
    assert z == sorted(z) and all(v >= 0 for v in z)
    small = [0.01 * (i + 1) for i in range(10)]  # a live campaign's 10 holdout runs
    held = model.calibrated({"method": HOLDOUT, "z": small})
    assert held.interval_multiplier(0.9, 20.0) == small[-1]  # not widened back to the t
