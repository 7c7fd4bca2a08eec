"""Fitting the Gaussian process on log T of :mod:`nimo.model.gp` (scipy; the model that
uses it predicts with numpy alone).

The kernel maximises the marginal likelihood of the centred log T: an isotropic grid gives
the start, L-BFGS-B (analytic gradient, log parameters) then fits a length scale per
attribute, on at most ``MAX_HYPER_RUNS`` runs; the process is then conditioned on every run.
Refits between kernel choices (each fold of a cross-validation, each new run) reuse it.
scikit-learn's regressor finds the same optimum but took seconds per fit with restarts,
which the planner cannot spend after every run.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from nimo.model.gp import GPHyper, LogTProcess, log_scaled, matern52
from nimo.model.support import seeded_rows
from nimo.predictors.residual import log_likelihood, negative_ll_and_gradient, refined

MIN_RUNS = 5
MAX_HYPER_RUNS = 120
LENGTHSCALES = (0.1, 0.3, 1.0)  # isotropic starts, x sqrt(attributes)
SIGNAL_SHARES = (0.5, 0.9, 0.99)  # of the centred log T's mean square the process explains
LENGTHSCALE_BOUNDS = (0.02, 100.0)
NOISE_FLOOR = 1e-6  # of the mean square


def choose_hyper(levels: Sequence[Sequence[float]], rows: np.ndarray, T: np.ndarray,
                 seed: int = 0) -> GPHyper | None:
    """The kernel of largest marginal likelihood for log T at ``rows``; None with fewer than
    ``MIN_RUNS`` runs, a T that is not positive and finite, or a constant log T."""
    T = np.asarray(T, float)
    if T.size < MIN_RUNS or not (np.isfinite(T).all() and (T > 0).all()):
        return None
    scaled, y = log_scaled(levels, rows), np.log(T)
    if y.size > MAX_HYPER_RUNS:
        keep = seeded_rows(y.size, MAX_HYPER_RUNS, seed)
        scaled, y = scaled[keep], y[keep]
    r = y - y.mean()
    total = float(np.mean(r * r))
    if total <= 1e-12:
        return None
    k = scaled.shape[1]
    starts = [GPHyper((ls * math.sqrt(k),) * k, share * total, (1 - share) * total)
              for ls in LENGTHSCALES for share in SIGNAL_SHARES]
    start = max(starts, key=lambda h: -_negative_ll(scaled, r, h))
    return _optimised(scaled, r, start, total)


def _optimised(scaled: np.ndarray, r: np.ndarray, start: GPHyper, total: float) -> GPHyper:
    """``start`` refined by L-BFGS-B (log parameters, analytic gradient); ``start`` again
    when the refinement fails or is not better."""
    k = scaled.shape[1]
    diff2 = (scaled[:, None, :] - scaled[None, :, :]) ** 2  # n x n x k
    theta0 = np.log([*start.lengthscales, start.signal, start.noise])
    lo, hi = (math.log(v) for v in LENGTHSCALE_BOUNDS)
    bounds = [(lo, hi)] * k + [(math.log(1e-3 * total), math.log(100 * total)),
                               (math.log(NOISE_FLOOR * total), math.log(total))]

    def objective(theta: np.ndarray) -> tuple[float, np.ndarray]:
        return _negative_ll_and_gradient(theta, diff2, r)

    theta = refined(objective, theta0, bounds, maxiter=80)
    if theta is None:
        return start
    t = np.exp(theta)
    return GPHyper(tuple(float(v) for v in t[:k]), float(t[k]), float(t[k + 1]))


def _negative_ll_and_gradient(theta: np.ndarray, diff2: np.ndarray, r: np.ndarray
                              ) -> tuple[float, np.ndarray]:
    """Matern 5/2: with ``s = sqrt(5 sum_j d_j^2 / l_j^2)``, ``dk/dlog l_j = signal * 5/3 *
    (1 + s) e^-s d_j^2 / l_j^2``."""
    k = diff2.shape[2]
    ls2, signal, noise = np.exp(2 * theta[:k]), math.exp(theta[k]), math.exp(theta[k + 1])
    scaled2 = diff2 / ls2
    s = np.sqrt(5.0 * scaled2.sum(axis=2))
    e = np.exp(-s)
    Kf = signal * (1.0 + s + s * s / 3.0) * e
    slope = signal * 5.0 / 3.0 * (1.0 + s) * e
    return negative_ll_and_gradient(
        Kf, noise, r, k, lambda W: np.einsum("ij,ijk->k", W * slope, scaled2))


def _negative_ll(scaled: np.ndarray, r: np.ndarray, h: GPHyper) -> float:
    return -log_likelihood(matern52(scaled, scaled, h) + h.noise * np.eye(r.size), r)


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
