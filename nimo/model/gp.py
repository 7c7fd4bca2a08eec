"""A Gaussian process on log T (numpy only): the non-parametric member of the model family.

Each attribute is scaled to [0, 1] over its levels, by its logarithm where every level is
positive (a doubling of a capacity or a size counts alike anywhere on its range) and
linearly otherwise. The kernel is Matern 5/2 with a length scale per attribute, ``signal *
(1 + s + s^2 / 3) * exp(-s)`` with ``s = sqrt(5 * sum_j ((x_j - x'_j) / l_j)^2)``, plus
``noise`` on the diagonal; the prior mean is the training runs' mean log T, so far from
every run the prediction returns to it and its variance grows to the signal's (a blend
weighs it by :meth:`LogTProcess.predict_informed`, so the parametric form speaks there).
:mod:`nimo.predictors.gp` fits the kernel.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

MAX_ABS_LOG_T = 50.0  # a predicted log T is held within e^+-50 s before exp


@dataclass(frozen=True)
class GPHyper:
    """Per-attribute length scales (scaled units), signal and noise variances (log T)."""

    lengthscales: tuple[float, ...]
    signal: float
    noise: float


def log_scaled(levels: Sequence[Sequence[float]], X: np.ndarray) -> np.ndarray:
    """Each column to [0, 1] over its levels (by logarithm when all are positive, else
    linearly), continued beyond them in the same units."""
    X = np.atleast_2d(np.asarray(X, float))
    out = np.empty_like(X)
    for j, lv in enumerate(levels):
        lo, hi = (float(min(lv)), float(max(lv))) if len(lv) else (0.0, 0.0)
        if lo > 0 and hi > lo:
            out[:, j] = np.log(np.maximum(X[:, j], lo * 1e-12) / lo) / math.log(hi / lo)
        else:
            out[:, j] = (X[:, j] - lo) / ((hi - lo) or 1.0)
    return out


def matern52(A: np.ndarray, B: np.ndarray, h: GPHyper) -> np.ndarray:
    """The kernel between scaled rows A and B (no noise)."""
    inv = 1.0 / np.asarray(h.lengthscales, float)
    A, B = A * inv, B * inv
    d2 = np.maximum((A * A).sum(axis=1)[:, None] + (B * B).sum(axis=1)[None, :]
                    - 2.0 * A @ B.T, 0.0)
    s = np.sqrt(5.0 * d2)
    return h.signal * (1.0 + s + s * s / 3.0) * np.exp(-s)


def lower_inverse(L: np.ndarray, leaf: int = 64) -> np.ndarray:
    """The inverse of a lower-triangular L by halves, ``[[A, 0], [C, D]]^-1 = [[A^-1, 0],
    [-D^-1 C A^-1, D^-1]]``: products instead of a general inverse (5x faster at 500 runs,
    numpy only)."""
    n = L.shape[0]
    if n <= leaf:
        return np.linalg.inv(L)
    h = n // 2
    a_inv, d_inv = lower_inverse(L[:h, :h], leaf), lower_inverse(L[h:, h:], leaf)
    out = np.zeros_like(L)
    out[:h, :h], out[h:, h:] = a_inv, d_inv
    out[h:, :h] = -(d_inv @ (L[h:, :h] @ a_inv))
    return out


@dataclass(frozen=True, eq=False)
class LogTProcess:
    """The process conditioned on ``log_t`` at the training ``rows``."""

    levels: Sequence[Sequence[float]]
    rows: np.ndarray
    log_t: np.ndarray
    hyper: GPHyper
    _scaled: np.ndarray = field(init=False, repr=False)
    _chol_inv: np.ndarray = field(init=False, repr=False)  # L^-1, K = L L^T
    _alpha: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "levels", [[float(v) for v in lv] for lv in self.levels])
        object.__setattr__(self, "rows", np.atleast_2d(np.asarray(self.rows, float)))
        object.__setattr__(self, "log_t", np.asarray(self.log_t, float))
        scaled = log_scaled(self.levels, self.rows)
        K = matern52(scaled, scaled, self.hyper) + self.hyper.noise * np.eye(len(scaled))
        # the factor's inverse, once: every prediction is then a product, not a solve
        chol_inv = lower_inverse(np.linalg.cholesky(K))
        alpha = chol_inv.T @ (chol_inv @ (self.log_t - self.mean))
        object.__setattr__(self, "_scaled", scaled)
        object.__setattr__(self, "_chol_inv", chol_inv)
        object.__setattr__(self, "_alpha", alpha)

    @property
    def mean(self) -> float:
        return float(self.log_t.mean())

    def scaled(self, X: np.ndarray) -> np.ndarray:
        """Rows X in the kernel's units (:func:`log_scaled` over the process's levels)."""
        return log_scaled(self.levels, X)

    def whitened(self, scaled: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(the kernel between the runs and the scaled rows, ``L^-1`` times it): the
        posterior covariance of two rows is their kernel less the product of these."""
        k = matern52(self._scaled, scaled, self.hyper)
        return k, self._chol_inv @ k

    def predict_log(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Posterior mean and variance of log T at rows X (the variance without noise)."""
        k, v = self.whitened(self.scaled(X))
        var = np.maximum(self.hyper.signal - (v * v).sum(axis=0), 0.0)
        return np.clip(self.mean + self._alpha @ k, -MAX_ABS_LOG_T, MAX_ABS_LOG_T), var

    def predict(self, X: np.ndarray) -> np.ndarray:
        """Predicted T (the exponential of the posterior mean of log T) at rows X."""
        return np.exp(self.predict_log(X)[0])

    def predict_informed(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(predicted T, how far the runs inform it) at rows X: the share of the prior
        variance the runs explain, 1 at a run without noise, 0 far from every run."""
        log_t, var = self.predict_log(X)
        if self.hyper.signal <= 0:
            return np.exp(log_t), np.zeros(log_t.size)
        return np.exp(log_t), np.clip(1.0 - var / self.hyper.signal, 0.0, 1.0)

    def to_dict(self) -> dict[str, Any]:
        return {"log_t": [float(v) for v in self.log_t],
                "lengthscales": [float(v) for v in self.hyper.lengthscales],
                "signal": self.hyper.signal, "noise": self.hyper.noise}


def process_from(d: Any, levels: Sequence[Sequence[float]],
                 support: Sequence[Sequence[float]] | None) -> tuple[LogTProcess | None, float]:
    """The ``gp`` field of a model's JSON over its support rows: (the process, its blend
    weight in (0, 1]); (None, 0.0) when absent."""
    if d is None:
        return None, 0.0
    if not isinstance(d, Mapping) or support is None:
        raise ValueError("'gp' needs 'support' and must be an object")
    log_t = np.asarray([float(v) for v in d["log_t"]], float)
    if log_t.size != len(support) or not np.isfinite(log_t).all():
        raise ValueError("'gp.log_t' must hold one finite value per support row")
    scales = tuple(float(v) for v in d["lengthscales"])
    if len(scales) != len(levels) or not all(v > 0 for v in scales):
        raise ValueError("'gp.lengthscales' must hold one positive number per attribute")
    hyper = GPHyper(scales, float(d["signal"]), float(d["noise"]))
    if not (hyper.signal >= 0 and hyper.noise > 0):
        raise ValueError("'gp' needs signal >= 0 and noise > 0")
    weight = float(d["weight"])
    if not 0.0 < weight <= 1.0:
        raise ValueError("'gp.weight' must lie in (0, 1]")
    return LogTProcess(levels, np.asarray(support, float), log_t, hyper), weight


def blended(parametric: np.ndarray, gp: np.ndarray | float, weight: np.ndarray | float
            ) -> np.ndarray:
    """``P^(1-v) G^v`` with v the (per-row) weight (P alone where v = 0, whatever G)."""
    v = np.asarray(weight, float)
    if not v.any():
        return np.asarray(parametric, float)
    return np.asarray(parametric, float) ** (1.0 - v) * np.asarray(gp, float) ** v
