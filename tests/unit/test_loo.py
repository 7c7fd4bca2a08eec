"""Closed-form leave-one-out equals brute-force refits of the chosen design."""

from __future__ import annotations

import numpy as np
import pytest

from nimo.metrics import fit_error_pct as mape
from nimo.model.predictor import hat_loo
from nimo.predictors import PredictorOptions, fit_predictor, loo_mape, loo_predictions

NAMES = ("cpu", "mem", "lat")
LEVELS = {"cpu": [451.0, 797.0, 930.0, 996.0, 1396.0], "mem": [64.0, 256.0, 512.0, 1024.0],
          "lat": [0.0, 6.0, 12.0, 18.0]}
REF = (930.0, 512.0, 6.0)


def sample(seed: int, n: int = 40):
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.choice(LEVELS[a], n) for a in NAMES])
    z = X / np.array([930.0, 512.0, 18.0])
    y = (1.0 / z[:, 0] + 0.4 * np.maximum(0, 0.5 - z[:, 1]) + 0.3 * z[:, 2] / z[:, 0])
    return X, y * np.exp(0.05 * rng.standard_normal(n))


def brute_force(pred, X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Refit the chosen design without each point and predict it."""
    A = pred.design(X)
    r = np.log(y / pred.y_scale) if pred.response == "log" else y / pred.y_scale
    out = np.empty(len(y))
    for i in range(len(y)):
        keep = np.arange(len(y)) != i
        b, *_ = np.linalg.lstsq(A[keep], r[keep], rcond=None)
        eta = A[i] @ b
        out[i] = pred.y_scale * (np.exp(eta) if pred.response == "log" else eta)
    return out


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("log_response", [False, True])
def test_closed_form_equals_brute_force(seed: int, log_response: bool) -> None:
    X, y = sample(seed)
    opts = PredictorOptions(log_response=log_response)
    pred = fit_predictor("o_a", X, y, NAMES, NAMES, REF, float(y[0]), LEVELS, opts)
    assert len(pred.terms) >= 2
    fast = loo_predictions(pred, X, y)
    slow = brute_force(pred, X, y)
    np.testing.assert_allclose(fast, slow, rtol=1e-9, atol=1e-12)
    assert loo_mape(pred, X, y) == pytest.approx(mape(y, slow), rel=1e-9)
    assert pred.loo_mape == pytest.approx(mape(y, slow), rel=1e-9)


def test_log_response_is_chosen_for_multiplicative_data() -> None:
    rng = np.random.default_rng(1)
    X = np.column_stack([rng.choice(LEVELS[a], 40) for a in NAMES])
    y = (X[:, 0] / 930.0) ** -1.5 * np.exp(0.02 * rng.standard_normal(40))
    pred = fit_predictor("o_a", X, y, NAMES, NAMES, REF, 1.0, LEVELS)
    assert pred.response == "log"
    np.testing.assert_allclose(loo_predictions(pred, X, y), brute_force(pred, X, y), rtol=1e-9)


def test_rank_deficient_design_and_full_leverage() -> None:
    rng = np.random.default_rng(2)
    x = rng.random(8)
    A = np.column_stack([np.ones(8), x, 2 * x])  # third column adds no rank
    r = 1 + 3 * x + 0.1 * rng.standard_normal(8)
    loo, h = hat_loo(A, r)
    ref, _ = hat_loo(A[:, :2], r)
    np.testing.assert_allclose(loo, ref, rtol=1e-10)
    assert h.sum() == pytest.approx(2.0)
    B = np.column_stack([np.ones(3), [0.0, 1.0, 0.0]])  # point 1 alone defines its column
    loo, h = hat_loo(B, np.array([1.0, 5.0, 2.0]))
    assert np.isnan(loo[1]) and np.isfinite(loo[[0, 2]]).all()
    assert loo[0] == pytest.approx(2.0) and loo[2] == pytest.approx(1.0)


def test_mape() -> None:
    assert mape([100.0, 200.0], [110.0, 180.0]) == pytest.approx(10.0)
    assert mape([1.0, np.nan], [1.5, 3.0]) == pytest.approx(50.0)  # non-finite pairs skipped
    assert np.isnan(mape([np.nan], [1.0]))
    # zero actuals are floored at 0.1% of mean |y|, not infinite
    value = mape([0.0, 2.0], [0.001, 2.0])
    assert np.isfinite(value) and value == pytest.approx(100.0 * 0.5 * 0.001 / 0.001)
    assert mape([0.0, 0.0], [0.0, 0.0]) == 0.0
