"""The Gaussian process on log T: numpy prediction (nimo.model.gp) and fitting
(nimo.predictors.gp)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import ConstantKernel, Matern, WhiteKernel

from nimo.model.gp import GPHyper, LogTProcess, log_scaled, process_from
from nimo.predictors.gp import choose_hyper, fit_process

LEVELS = [[1.0, 2.0, 4.0, 8.0, 16.0], [0.0, 5.0, 10.0]]


def _runs() -> tuple[np.ndarray, np.ndarray]:
    X = np.array([[a, b] for a in LEVELS[0] for b in LEVELS[1]])
    T = 5.0 + 60.0 / X[:, 0] + 0.4 * X[:, 1] * (X[:, 0] < 3)
    return X, T


def test_the_numpy_prediction_is_scikit_learns_for_the_same_kernel() -> None:
    X, T = _runs()
    hyper = GPHyper((0.7, 0.4), 1.3, 0.01)
    kernel = ConstantKernel(hyper.signal, "fixed") * Matern(
        hyper.lengthscales, "fixed", nu=2.5) + WhiteKernel(hyper.noise, "fixed")
    y = np.log(T)
    reference = GaussianProcessRegressor(kernel, optimizer=None).fit(log_scaled(LEVELS, X),
                                                                     y - y.mean())
    Z = np.array([[3.0, 2.5], [1.0, 10.0], [20.0, 0.0]])
    mean, sd = reference.predict(log_scaled(LEVELS, Z), return_std=True)
    process = LogTProcess(LEVELS, X, y, hyper)
    log_t, var = process.predict_log(Z)
    assert log_t == pytest.approx(mean + y.mean(), rel=1e-8)
    # scikit-learn's variance includes the white noise; ours is the latent function's
    assert var + hyper.noise == pytest.approx(sd ** 2, rel=1e-6)


def test_far_from_every_run_the_prediction_returns_to_the_mean_with_the_signals_variance() -> None:
    X, T = _runs()
    process = LogTProcess(LEVELS, X, np.log(T), GPHyper((0.3, 0.3), 0.5, 0.01))
    log_t, var = process.predict_log(np.array([[1e9, 1e4]]))
    assert log_t[0] == pytest.approx(process.mean)
    assert var[0] == pytest.approx(0.5)
    near, near_var = process.predict_log(X[:1])
    assert near[0] == pytest.approx(np.log(T[0]), abs=0.05) and near_var[0] < 0.05


def test_a_fitted_process_follows_the_runs_and_survives_its_json() -> None:
    X, T = _runs()
    process = fit_process(LEVELS, X, T)
    assert process is not None
    assert np.abs(process.predict(X) / T - 1).max() < 0.1
    again, weight = process_from({**process.to_dict(), "weight": 0.5}, LEVELS, X.tolist())
    assert again is not None and weight == 0.5
    assert process_from(None, LEVELS, X.tolist()) == (None, 0.0)
    Z = np.array([[3.0, 7.0], [12.0, 1.0]])
    assert again.predict(Z) == pytest.approx(process.predict(Z), rel=1e-12)


def test_no_kernel_from_too_few_or_non_positive_runs() -> None:
    X, T = _runs()
    assert choose_hyper(LEVELS, X[:4], T[:4]) is None
    assert choose_hyper(LEVELS, X, np.where(np.arange(T.size) == 3, 0.0, T)) is None
    assert fit_process(LEVELS, X[:4], T[:4]) is None


@pytest.mark.parametrize("bad, message", [
    ({"log_t": [1.0], "lengthscales": [1.0, 1.0], "signal": 1.0, "noise": 0.1, "weight": 1},
     "one finite value per support row"),
    ({"log_t": [1.0] * 15, "lengthscales": [1.0], "signal": 1.0, "noise": 0.1, "weight": 1},
     "one positive number per attribute"),
    ({"log_t": [1.0] * 15, "lengthscales": [1.0, 1.0], "signal": 1.0, "noise": 0.0,
      "weight": 1}, "noise > 0"),
    ({"log_t": [1.0] * 15, "lengthscales": [1.0, 1.0], "signal": 1.0, "noise": 0.1,
      "weight": 0}, r"weight' must lie in \(0, 1\]"),
])
def test_a_corrupt_gp_field_is_refused_with_what_would_be_valid(bad: dict, message: str) -> None:
    X, _ = _runs()
    with pytest.raises(ValueError, match=message):
        process_from(bad, LEVELS, X.tolist())


def test_the_likelihood_gradient_is_the_finite_difference_one() -> None:
    from nimo.predictors.gp import _negative_ll_and_gradient

    X, T = _runs()
    scaled = log_scaled(LEVELS, X)
    diff2 = (scaled[:, None, :] - scaled[None, :, :]) ** 2
    r = np.log(T) - np.log(T).mean()
    theta = np.log([0.6, 0.3, 0.8, 0.02])
    _, grad = _negative_ll_and_gradient(theta, diff2, r)
    step = 1e-6
    for i in range(theta.size):
        up, down = theta.copy(), theta.copy()
        up[i] += step
        down[i] -= step
        numeric = (_negative_ll_and_gradient(up, diff2, r)[0]
                   - _negative_ll_and_gradient(down, diff2, r)[0]) / (2 * step)
        assert grad[i] == pytest.approx(numeric, rel=1e-4, abs=1e-6)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_the_chosen_kernel_is_as_likely_as_scikit_learns_optimum() -> None:
    from nimo.predictors.gp import _negative_ll

    X, T = _runs()
    scaled, y = log_scaled(LEVELS, X), np.log(T)
    r = y - y.mean()
    ours = choose_hyper(LEVELS, X, T)
    assert ours is not None
    kernel = ConstantKernel(1.0) * Matern([0.5, 0.5], (0.02, 100.0), nu=2.5) + WhiteKernel(
        1e-3, (1e-6, 1.0))
    fitted = GaussianProcessRegressor(kernel, n_restarts_optimizer=3, random_state=0).fit(
        scaled, r).kernel_
    theirs = GPHyper(tuple(fitted.k1.k2.length_scale), fitted.k1.k1.constant_value,
                     fitted.k2.noise_level)
    assert _negative_ll(scaled, r, ours) <= _negative_ll(scaled, r, theirs) + 0.5


def test_the_runs_inform_the_process_near_them_and_not_far_away() -> None:
    X, T = _runs()
    process = LogTProcess(LEVELS, X, np.log(T), GPHyper((0.3, 0.3), 0.5, 0.001))
    _, informed = process.predict_informed(np.array([[1.0, 0.0], [3.0, 2.5], [1e9, 1e4]]))
    assert informed[0] > 0.99 and 0.0 < informed[1] <= 1.0 and informed[2] == pytest.approx(0)


def test_the_lower_inverse_by_halves_is_the_inverse() -> None:
    from nimo.model.gp import lower_inverse

    rng = np.random.default_rng(0)
    for n in (1, 5, 64, 65, 300):
        A = rng.normal(size=(n, n))
        L = np.linalg.cholesky(A @ A.T / n + 0.05 * np.eye(n))
        inv = lower_inverse(L)
        assert np.allclose(inv @ L, np.eye(n), atol=1e-10)
        assert np.allclose(np.triu(inv, 1), 0.0)
