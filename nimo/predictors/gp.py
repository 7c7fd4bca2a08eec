"""Fitting the Gaussian process on log T of :mod:`nimo.model.gp` (scikit-learn; the model
that uses it predicts with numpy alone).

The kernel maximises the marginal likelihood of the centred log T (scikit-learn's
``GaussianProcessRegressor``, L-BFGS-B from its start and two seeded restarts) on at most
``MAX_HYPER_RUNS`` runs; the process is then conditioned on every run with that kernel.
Refits between kernel choices (each fold of a cross-validation, each new run) reuse it.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np

from nimo.model.gp import GPHyper, LogTProcess, log_scaled

MIN_RUNS = 5
MAX_HYPER_RUNS = 120
LENGTHSCALE_BOUNDS = (0.02, 100.0)
NOISE_BOUNDS = (1e-6, 1.0)


def choose_hyper(levels: Sequence[Sequence[float]], rows: np.ndarray, T: np.ndarray,
                 seed: int = 0) -> GPHyper | None:
    """The kernel of largest marginal likelihood for log T at ``rows``; None with fewer than
    ``MIN_RUNS`` runs or a T that is not positive and finite."""
    from sklearn.gaussian_process import GaussianProcessRegressor
    from sklearn.gaussian_process.kernels import ConstantKernel, Matern, WhiteKernel

    T = np.asarray(T, float)
    if T.size < MIN_RUNS or not (np.isfinite(T).all() and (T > 0).all()):
        return None
    scaled, y = log_scaled(levels, rows), np.log(T)
    if y.size > MAX_HYPER_RUNS:
        keep = np.random.default_rng(seed).choice(y.size, MAX_HYPER_RUNS, replace=False)
        scaled, y = scaled[keep], y[keep]
    k = scaled.shape[1]
    kernel = ConstantKernel(1.0) * Matern(np.full(k, 0.5), LENGTHSCALE_BOUNDS, nu=2.5) \
        + WhiteKernel(1e-3, NOISE_BOUNDS)
    with warnings.catch_warnings():  # a bound reached is a valid kernel, not an error
        warnings.simplefilter("ignore")
        gp = GaussianProcessRegressor(kernel, n_restarts_optimizer=2, random_state=seed)
        gp.fit(scaled, y - y.mean())
    fitted = gp.kernel_
    scales = np.atleast_1d(fitted.k1.k2.length_scale).astype(float)
    if scales.size == 1:
        scales = np.full(k, float(scales[0]))
    return GPHyper(tuple(float(v) for v in scales), float(fitted.k1.k1.constant_value),
                   float(fitted.k2.noise_level))


def fit_process(levels: Sequence[Sequence[float]], rows: np.ndarray, T: np.ndarray,
                hyper: GPHyper | None = None) -> LogTProcess | None:
    """The process on log T at ``rows`` with ``hyper`` or a kernel chosen on these runs;
    None when no kernel can be chosen or the kernel matrix is not positive definite."""
    T = np.asarray(T, float)
    if hyper is None:
        hyper = choose_hyper(levels, rows, T)
    if hyper is None or T.size < 2 or not (np.isfinite(T).all() and (T > 0).all()):
        return None
    try:
        return LogTProcess(levels, np.asarray(rows, float), np.log(T), hyper)
    except np.linalg.LinAlgError:
        return None
