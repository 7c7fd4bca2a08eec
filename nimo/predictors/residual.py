"""Fitting the residual correction of :mod:`nimo.model.residual` (scipy; the model that
uses it predicts with numpy alone).

The kernel maximises the marginal likelihood of the log-residuals: an isotropic grid gives
the start, L-BFGS-B (analytic gradient, log parameters) then fits a length scale per
attribute. A long length scale lets an attribute off; pure noise beating every kernel means
no correction.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
from scipy.optimize import minimize

from nimo.model.residual import Hyper, ResidualField, kernel
from nimo.model.support import rank_scaled, seeded_rows

LENGTHSCALES = (0.08, 0.15, 0.3, 0.6)  # isotropic starts, x sqrt(attributes)
SIGNAL_SHARES = (0.3, 0.6, 0.9)  # of the residuals' mean square that the process explains
MIN_RUNS = 6
MAX_HYPER_RUNS = 120  # the kernel is chosen on a seeded subset of at most this many runs


def choose_hyper(levels: Sequence[Sequence[float]], rows: np.ndarray,
                 residuals: np.ndarray, seed: int = 0) -> Hyper | None:
    """The kernel of largest marginal likelihood (an isotropic grid, then per-attribute
    length scales by L-BFGS-B from its best point, on at most ``MAX_HYPER_RUNS`` runs);
    None when pure noise explains the residuals best or there are too few runs."""
    r = np.asarray(residuals, float)
    if r.size < MIN_RUNS or not np.isfinite(r).all():
        return None
    total = float(np.mean(r * r))
    if total <= 1e-12:
        return None
    scaled = rank_scaled(levels, rows)
    if r.size > MAX_HYPER_RUNS:
        keep = seeded_rows(r.size, MAX_HYPER_RUNS, seed)
        scaled, r = scaled[keep], r[keep]
    k = scaled.shape[1]
    starts = [Hyper((ls * math.sqrt(k),) * k, share * total, (1 - share) * total)
              for ls in LENGTHSCALES for share in SIGNAL_SHARES]
    start = max(starts, key=lambda h: _log_likelihood(scaled, r, h))
    best = _optimised(scaled, r, start, total)
    noise_only = Hyper((1.0,) * k, 0.0, total)
    if _log_likelihood(scaled, r, best) <= _log_likelihood(scaled, r, noise_only):
        return None
    return best


def _optimised(scaled: np.ndarray, r: np.ndarray, start: Hyper, total: float) -> Hyper:
    """``start`` refined by L-BFGS-B on the log marginal likelihood (log parameters,
    analytic gradient); ``start`` again when the refinement fails or is not better."""
    k = scaled.shape[1]
    sq = (scaled[:, None, :] - scaled[None, :, :]) ** 2  # n x n x k
    theta0 = np.log([*start.lengthscales, start.signal, start.noise])
    bounds = [(math.log(0.03), math.log(30.0))] * k + [
        (math.log(1e-3 * total), math.log(10 * total)),
        (math.log(1e-3 * total), math.log(total))]

    def objective(theta: np.ndarray) -> tuple[float, np.ndarray]:
        return _negative_ll_and_gradient(theta, sq, r)

    theta = refined(objective, theta0, bounds, maxiter=60)
    if theta is None:
        return start
    t = np.exp(theta)
    return Hyper(tuple(float(v) for v in t[:k]), float(t[k]), float(t[k + 1]))


Objective = Callable[[np.ndarray], tuple[float, np.ndarray]]


def refined(objective: Objective, theta0: np.ndarray, bounds: Sequence[tuple[float, float]],
            maxiter: int) -> np.ndarray | None:
    """``theta0`` refined by L-BFGS-B on ``objective`` (value and gradient); None when the
    refinement fails or ends no better than it started."""
    try:
        res = minimize(objective, theta0, jac=True, method="L-BFGS-B", bounds=bounds,
                       options={"maxiter": maxiter})
    except (np.linalg.LinAlgError, ValueError, FloatingPointError):
        return None
    if not np.isfinite(res.fun) or res.fun > objective(theta0)[0]:
        return None
    return np.asarray(res.x, float)


def _negative_ll_and_gradient(theta: np.ndarray, sq: np.ndarray, r: np.ndarray
                              ) -> tuple[float, np.ndarray]:
    k = sq.shape[2]
    ls2, signal, noise = np.exp(2 * theta[:k]), math.exp(theta[k]), math.exp(theta[k + 1])
    Kf = signal * np.exp(-0.5 * (sq / ls2).sum(axis=2))
    return negative_ll_and_gradient(
        Kf, noise, r, k, lambda W: np.einsum("ij,ijk->k", W * Kf, sq) / ls2)


def negative_ll_and_gradient(Kf: np.ndarray, noise: float, r: np.ndarray, k: int,
                             length_gradient: Callable[[np.ndarray], np.ndarray]
                             ) -> tuple[float, np.ndarray]:
    """A GP's negative log marginal likelihood of ``r`` and its gradient in (log length
    scales, log signal, log noise), from the noiseless kernel matrix ``Kf`` (signal x shape)
    and ``length_gradient(W)``, the trace of ``W dK/dlog l_j`` for each of the ``k`` length
    scales, with
    ``W = alpha alpha' - K^-1``; 1e10 where the kernel matrix is not positive definite."""
    try:
        chol = np.linalg.cholesky(Kf + noise * np.eye(r.size))
    except np.linalg.LinAlgError:
        return 1e10, np.zeros(k + 2)
    inv = np.linalg.solve(chol.T, np.linalg.solve(chol, np.eye(r.size)))
    alpha = inv @ r
    W = np.outer(alpha, alpha) - inv
    lengths = length_gradient(W)
    grad = np.concatenate([0.5 * lengths, [0.5 * (W * Kf).sum(), 0.5 * noise * np.trace(W)]])
    ll = -0.5 * r @ alpha - np.log(np.diag(chol)).sum()
    return float(-ll), -grad


def _log_likelihood(scaled: np.ndarray, r: np.ndarray, h: Hyper) -> float:
    return log_likelihood(kernel(scaled, scaled, h) + h.noise * np.eye(r.size), r)


def log_likelihood(K: np.ndarray, r: np.ndarray) -> float:
    """The log marginal likelihood of ``r`` under the kernel matrix ``K`` (noise included,
    up to a constant); -inf where K is not positive definite."""
    try:
        chol = np.linalg.cholesky(K)
    except np.linalg.LinAlgError:
        return -math.inf
    a = np.linalg.solve(chol, r)
    return float(-0.5 * a @ a - np.log(np.diag(chol)).sum())


def log_residuals(T: np.ndarray, parametric: np.ndarray) -> np.ndarray:
    """``log T - log parametric``; 0 where either is not a positive number (such a run pulls
    towards the parametric form)."""
    ok = np.isfinite(T) & (T > 0) & np.isfinite(parametric) & (parametric > 0)
    r = np.zeros(T.size)
    r[ok] = np.log(T[ok]) - np.log(parametric[ok])
    return r


def fit_field(levels: Sequence[Sequence[float]], rows: np.ndarray, T: np.ndarray,
              parametric: np.ndarray, hyper: Hyper | None = None) -> ResidualField | None:
    """The correction of ``parametric`` (its predictions at ``rows``) towards the measured
    ``T``, with ``hyper`` or a kernel chosen on these runs; None when no kernel beats noise
    or the runs are too few."""
    r = log_residuals(T, parametric)
    if hyper is None:
        hyper = choose_hyper(levels, rows, r)
    if hyper is None or np.count_nonzero(r) < MIN_RUNS:
        return None
    try:
        return ResidualField(levels, np.asarray(rows, float), r, hyper)
    except np.linalg.LinAlgError:
        return None
